package dev.claimq.mcp;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.claimq.api.StrictJson;
import io.quarkiverse.mcp.server.RawMessage;
import io.quarkus.vertx.http.runtime.CurrentVertxRequest;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.ConstraintViolationException;
import jakarta.validation.Validator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A tool call's arguments, read as strictly as a REST body. The transport has parsed the message
 * already, but its parser rounds numbers to doubles and keeps the last of two equal keys, so the
 * arguments are read again from the request's own bytes: numbers stay exact, a key named twice is
 * refused, and the API's reader (StrictJson) then refuses wrong types, unknown arguments and text
 * that cannot be stored, in the API's words.
 */
@ApplicationScoped
class ToolArguments {
  /**
   * The JSON-RPC envelope: exact numbers, as long as the API reads them, no key twice; the values
   * are judged by the API's reader.
   */
  static final ObjectMapper ENVELOPE =
      JsonMapper.builder(
              JsonFactory.builder()
                  .streamReadConstraints(StrictJson.numbersBounded(new JsonFactory()))
                  .build())
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .configure(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES, false)
          .build();

  /**
   * The body as UTF-8 text, which McpEnvelope has checked it is. From the raw bytes Jackson would
   * guess UTF-16 or UTF-32 and decode overlong forms, reading what was not sent. One byte order
   * mark before the text is skipped, as the API's reader (Jackson's, from the bytes) skips it and
   * RFC 8259 (8.1) lets a reader do: it is no part of the JSON. Anywhere else it is a character,
   * which no JSON value starts with.
   */
  static JsonNode body(byte[] bytes) throws IOException {
    int start = startsWithMark(bytes) ? UTF8_MARK.length : 0;
    String text = new String(bytes, start, bytes.length - start, StandardCharsets.UTF_8);
    try (JsonParser parser = ENVELOPE.createParser(text)) {
      try {
        return ENVELOPE.readTree(parser);
      } catch (StrictJson.NumberTooLong e) {
        throw new Unreadable(StrictJson.pathOf(parser), e);
      } catch (StrictJson.NestedTooDeep e) {
        throw new Unreadable(holderOf(parser), e);
      } catch (JsonParseException e) {
        if (String.valueOf(e.getOriginalMessage()).startsWith("Duplicate field")) {
          throw new NamedTwice(StrictJson.pathOf(parser), e, text);
        }
        throw e;
      }
    }
  }

  /**
   * A message that names a field twice in one object: valid JSON text (RFC 8259 only asks that
   * names be unique), but an ambiguous request. The body read again, keeping the last of two names,
   * gives the id of the message that holds it, unless that is the name given twice.
   */
  static final class NamedTwice extends IOException {
    /** Keeps the last of two names, as JSON parsers commonly do; only to find an id. */
    private static final ObjectMapper LENIENT = new ObjectMapper();

    /** The body so read, when it is a batch; else null. */
    final transient JsonNode batch;

    /** Which message of the batch names a field twice. */
    final int index;

    final transient JsonNode id;

    NamedTwice(String path, JsonParseException refusal, String text) {
      super(
          "The message names a field twice in one object ('"
              + path
              + "'"
              + (refusal.getLocation() == null
                  ? ""
                  : ", line "
                      + refusal.getLocation().getLineNr()
                      + ", column "
                      + refusal.getLocation().getColumnNr())
              + "): an ambiguous message is refused, not guessed.");
      JsonNode body;
      try {
        body = LENIENT.readTree(text);
      } catch (IOException e) {
        body = null; // broken further on: no message to take an id from
      }
      String within = path;
      JsonNode message = body;
      if (body != null && body.isArray() && path.startsWith("[")) {
        int end = path.indexOf(']');
        index = Integer.parseInt(path.substring(1, end));
        message = body.get(index);
        within = path.substring(end + 1).replaceFirst("^\\.", "");
        batch = body;
      } else {
        index = -1;
        batch = null;
      }
      JsonNode named = message == null || within.equals("id") ? null : message.get("id");
      id = named != null && (named.isTextual() || named.isIntegralNumber()) ? named : null;
    }
  }

  /**
   * The value that nests too deep, named as the API names a body's field: the message's member, its
   * params' or a tool call's argument that holds it (params.arguments.payload), not each of the
   * thousand levels below, where the parser stands.
   */
  private static String holderOf(JsonParser parser) {
    List<String> path = new ArrayList<>(); // from the root
    for (JsonStreamContext at = parser.getParsingContext(); at != null; at = at.getParent()) {
      if (at.inObject() && at.getCurrentName() != null) {
        path.add(0, at.getCurrentName());
      } else if (at.inArray()) {
        path.add(0, "[" + Math.max(at.getCurrentIndex(), 0) + "]");
      }
    }
    StringBuilder holder = new StringBuilder();
    int at = 0;
    if (at < path.size() && path.get(at).startsWith("[")) {
      holder.append(path.get(at++)); // a message of a batch
    }
    for (String within : List.of("", "params", "arguments")) {
      if (at == path.size() || path.get(at).startsWith("[")) {
        break;
      }
      if (!within.isEmpty() && !path.get(at - 1).equals(within)) {
        break;
      }
      holder.append(holder.isEmpty() ? "" : ".").append(path.get(at++));
    }
    return holder.toString();
  }

  /** U+FEFF, the byte order mark, in UTF-8. */
  private static final byte[] UTF8_MARK = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};

  private static boolean startsWithMark(byte[] bytes) {
    return bytes.length >= UTF8_MARK.length
        && bytes[0] == UTF8_MARK[0]
        && bytes[1] == UTF8_MARK[1]
        && bytes[2] == UTF8_MARK[2];
  }

  /**
   * A number written longer, or arrays and objects nested deeper, than the API reads, and where in
   * the message.
   */
  static final class Unreadable extends IOException {
    Unreadable(String where, StreamConstraintsException refusal) {
      super("the value of '" + where + "' " + refusal.getOriginalMessage());
    }
  }

  private final ObjectMapper json;
  private final Validator validator;
  private final CurrentVertxRequest request;

  ToolArguments(ObjectMapper json, Validator validator, CurrentVertxRequest request) {
    this.json = json;
    this.validator = validator;
    this.request = request;
  }

  /**
   * The call's arguments as sent: an object, empty when there were none, or what was sent. Read
   * from the body as McpEnvelope read it, once per POST (a batch's calls are found by id, not by
   * reading the body again for each), and copied, since a tool may take them apart.
   */
  JsonNode of(RawMessage message) {
    RoutingContext context = request.getCurrent();
    JsonNode body = context == null ? null : context.get(McpEnvelope.MESSAGE);
    if (body == null) {
      throw new IllegalStateException("a tool call without the HTTP request that carried it");
    }
    JsonNode call = body;
    if (body.isArray()) {
      Map<String, JsonNode> requests = context.get(McpEnvelope.REQUESTS);
      call = requests.get(idOf(message.asJsonObject().getValue("id")));
      if (call == null) {
        throw new IllegalStateException("a tool call that is not in its request's batch");
      }
    }
    JsonNode arguments = call.path("params").path("arguments");
    return arguments.isMissingNode() || arguments.isNull()
        ? JsonNodeFactory.instance.objectNode()
        : arguments.deepCopy();
  }

  /** The arguments as this record, checked by its constraints as a REST body is. */
  <T> T read(JsonNode arguments, Class<T> type) throws JsonProcessingException {
    T value = json.treeToValue(arguments, type);
    Set<ConstraintViolation<T>> violations = validator.validate(value);
    if (!violations.isEmpty()) {
      throw new ConstraintViolationException(violations);
    }
    return value;
  }

  /**
   * The arguments but one, which is read as this record (e.g. the queue beside an enqueue's body);
   * the rest stay for another record.
   */
  <T> T split(JsonNode arguments, String name, Class<T> type) throws JsonProcessingException {
    ObjectNode one = JsonNodeFactory.instance.objectNode();
    if (arguments instanceof ObjectNode object && object.has(name)) {
      one.set(name, object.remove(name));
    }
    return read(one, type);
  }

  /** A JSON-RPC id, as the transport's value or as its JSON, in one spelling. */
  static String idOf(Object id) {
    if (id instanceof JsonNode node) {
      return node.isTextual() ? "s:" + node.textValue() : "n:" + node.asText();
    }
    return id instanceof String text ? "s:" + text : "n:" + id;
  }
}
