package dev.claimq.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.claimq.api.BodyEncoding;
import dev.claimq.api.CheckedJsonReader;
import dev.claimq.api.Problem;
import dev.claimq.api.Storable;
import dev.claimq.config.ClaimqConfig;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

/**
 * Refuses a POST to /mcp whose JSON-RPC envelope is broken before the MCP extension reads it: the
 * extension answers an empty batch, a bare number, array params, and params of another shape than
 * MCP gives its method (McpParams) with a 500 and an ERROR line, or with no answer at all. Here
 * each is a JSON-RPC error (HTTP 400) that says what is wrong, as the REST API says it in a
 * problem: what reaches the extension is well formed UTF-8 JSON that can be read exactly, each
 * request with an id of its own and params of its method's shape. A body declared in a way it is
 * not read (not as JSON, a charset other than UTF-8, a content coding) is a 415 problem, as on the
 * API, and an Accept header that does not take both of Streamable HTTP's answers a 406 problem
 * (McpTransportFailures says which it must take).
 */
@ApplicationScoped
public class McpEnvelope {
  private static final int PARSE_ERROR = -32700;
  private static final int INVALID_REQUEST = -32600;
  private static final int INVALID_PARAMS = -32602;
  private static final int AFTER_AUTHORIZATION = -50;

  /** The context's key of the body as read here, for McpNotifications and ToolArguments. */
  static final String MESSAGE = "claimq.mcp.message";

  /** The context's key of a batch's requests by id (ToolArguments.idOf), for ToolArguments. */
  static final String REQUESTS = "claimq.mcp.requests";

  /**
   * The most messages one POST may hold, as many as the API's batches: each request of a batch runs
   * on a thread of its own, and a body of 1 MiB holds thousands of small ones.
   */
  static final int MAX_BATCH = 500;

  private final ClaimqConfig config;

  McpEnvelope(ClaimqConfig config) {
    this.config = config;
  }

  void checkFirst(@Observes Router router) {
    router
        .route(HttpMethod.POST, "/mcp")
        // After the key is checked (Quarkus runs its authentication and authorization filters
        // at orders -200 and -100: a request without a key is a 401, whatever its body), and
        // before the extension's route (from 0), whose body handler sees the body read.
        .order(AFTER_AUTHORIZATION)
        .handler(BodyHandler.create().setBodyLimit(config.limits().bodyBytes()))
        .handler(this::check);
  }

  private void check(RoutingContext context) {
    // Read as the API reads a body: compressed, or in a charset other than UTF-8, it would be
    // misread (see BodyEncoding).
    List<String> codings = context.request().headers().getAll(HttpHeaders.CONTENT_ENCODING);
    String coded = codings.isEmpty() ? null : BodyEncoding.whyCoded(String.join(", ", codings));
    if (coded != null) {
      context.response().putHeader(HttpHeaders.ACCEPT_ENCODING, BodyEncoding.ACCEPTED_CODINGS);
      refuseUnsupported(context, coded);
      return;
    }
    String contentType = context.request().getHeader(HttpHeaders.CONTENT_TYPE);
    // The streamable HTTP transport sends JSON only: text/plain, or no type, is not read as JSON.
    String unreadable =
        BodyEncoding.whyNotOneType(context.request().headers().getAll(HttpHeaders.CONTENT_TYPE));
    if (unreadable == null) {
      unreadable = BodyEncoding.whyNotJson(contentType);
    }
    if (unreadable == null) {
      unreadable = BodyEncoding.whyUnreadable(contentType);
    }
    if (unreadable != null) {
      refuseUnsupported(context, unreadable);
      return;
    }
    // Then what the client takes back: as on the API, before the body is parsed.
    String unacceptable =
        McpTransportFailures.whyNotAcceptable(
            context.request().headers().getAll(HttpHeaders.ACCEPT));
    if (unacceptable != null) {
      refuseProblem(context, 406, "Not Acceptable", unacceptable);
      return;
    }
    // Taken: said as the extension looks for it, in lower case and without weights.
    context.request().headers().set(HttpHeaders.ACCEPT, McpTransportFailures.BOTH);
    if (context.body().buffer() == null || context.body().buffer().length() == 0) {
      refuse(context, null, PARSE_ERROR, "The body is empty: send one JSON-RPC message.");
      return;
    }
    byte[] bytes = context.body().buffer().getBytes();
    String notText = notUtf8(bytes);
    if (notText != null) {
      refuse(context, null, PARSE_ERROR, notText);
      return;
    }
    JsonNode body;
    try {
      body = ToolArguments.body(bytes);
    } catch (ToolArguments.NamedTwice e) {
      Refusal twice = new Refusal(e.id, INVALID_REQUEST, e.getMessage());
      if (e.batch == null) {
        refuse(context, twice.id, twice.code, twice.message);
      } else {
        refuseEachRequest(
            context, e.batch, at -> at == e.index ? twice : refusalOf(e.batch.get(at)));
      }
      return;
    } catch (ToolArguments.Unreadable e) {
      refuse(context, null, PARSE_ERROR, "The body cannot be read: " + e.getMessage() + ".");
      return;
    } catch (IOException e) {
      refuse(context, null, PARSE_ERROR, "The body is not one JSON value: " + reason(e));
      return;
    } catch (NumberFormatException e) {
      // Jackson's one unchecked refusal of text it has tokenized: a number kept exactly (as a
      // BigDecimal) whose exponent is past an int, such as 1e2147483648.
      refuse(
          context,
          null,
          PARSE_ERROR,
          "The body cannot be read: a number in it has an exponent out of range.");
      return;
    }
    if (body == null || body.isMissingNode()) {
      refuse(context, null, PARSE_ERROR, "The body is empty: send one JSON-RPC message.");
      return;
    }
    if (body.isArray()) {
      if (body.isEmpty()) {
        refuse(context, null, INVALID_REQUEST, "An empty batch: send at least one message.");
        return;
      }
      if (body.size() > MAX_BATCH) {
        refuse(
            context,
            null,
            INVALID_REQUEST,
            "A batch of "
                + body.size()
                + " messages: send at most "
                + MAX_BATCH
                + " in one POST. None of them was run.");
        return;
      }
      if (!wellFormedBatch(context, body)) {
        return;
      }
    } else {
      Refusal refusal = refusalOf(body);
      if (refusal != null) {
        refuse(context, refusal.id, refusal.code, refusal.message);
        return;
      }
    }
    context.put(MESSAGE, body);
    context.next();
  }

  /** True when the batch may go on; else the refusal has been sent. */
  private boolean wellFormedBatch(RoutingContext context, JsonNode batch) {
    if (!refuseEachRequest(context, batch, at -> refusalOf(batch.get(at)))) {
      return false;
    }
    Map<String, JsonNode> requests = new HashMap<>();
    boolean answers = false;
    boolean others = false;
    for (JsonNode message : batch) {
      if (isAnswer(message)) {
        answers = true;
        continue;
      }
      others = true;
      JsonNode id = message.get("id");
      // The answers to a batch are told apart by id alone, and so are the calls of one batch
      // when a tool reads its arguments from the body: a repeated id would run the wrong one.
      if (id != null && requests.putIfAbsent(ToolArguments.idOf(id), message) != null) {
        refuse(
            context,
            id,
            INVALID_REQUEST,
            "The batch repeats the id "
                + id
                + ": give each request its own id, so that each answer can be told apart.");
        return false;
      }
    }
    if (answers && others) {
      // The extension takes such a batch for answers only: its requests would go unanswered.
      refuse(
          context,
          null,
          INVALID_REQUEST,
          "The batch mixes answers to the server's requests (messages with 'result' or 'error')"
              + " with requests or notifications: send the answers in a POST of their own.");
      return false;
    }
    context.put(REQUESTS, Map.copyOf(requests));
    return true;
  }

  /**
   * True when every message of the batch is well formed; else the batch has been answered, as
   * JSON-RPC answers a batch, with an array: each refused message's own error, and for each of its
   * other requests an error saying it was not run. Nothing of a batch with a broken message runs,
   * so that a client can send it again, mended, without running half of it twice.
   */
  private static boolean refuseEachRequest(
      RoutingContext context, JsonNode batch, IntFunction<Refusal> refusalAt) {
    List<Refusal> refusals = new ArrayList<>();
    List<Integer> refused = new ArrayList<>();
    for (int at = 0; at < batch.size(); at++) {
      Refusal refusal = refusalAt.apply(at);
      refusals.add(refusal);
      if (refusal != null) {
        refused.add(at);
      }
    }
    if (refused.isEmpty()) {
      return true;
    }
    String which = refused.stream().map(at -> "[" + at + "]").collect(Collectors.joining(", "));
    ArrayNode answers = JsonNodeFactory.instance.arrayNode();
    for (int at = 0; at < batch.size(); at++) {
      Refusal refusal = refusals.get(at);
      JsonNode message = batch.get(at);
      if (refusal != null) {
        answers.add(error(refusal.id, refusal.code, refusal.message));
      } else if (!isAnswer(message)
          && !message.path("method").textValue().startsWith("notifications/")) {
        answers.add(
            error(
                message.get("id"),
                INVALID_REQUEST,
                "Not run: the batch has "
                    + (refused.size() == 1 ? "a message" : "messages")
                    + " refused ("
                    + which
                    + "), and no part of such a batch is run. Send it again without "
                    + (refused.size() == 1
                        ? "that message, or with it mended."
                        : "them, or with them mended.")));
      }
    }
    context
        .response()
        .setStatusCode(400)
        .putHeader("Content-Type", "application/json")
        .end(answers.toString());
    return false;
  }

  private static boolean isAnswer(JsonNode message) {
    return !message.has("method") && (message.has("result") || message.has("error"));
  }

  /** A JSON-RPC error for one message: its id (null when it has none that can be read). */
  private record Refusal(JsonNode id, int code, String message) {}

  /** Null when the message may go on; else why not. */
  private static Refusal refusalOf(JsonNode message) {
    if (!message.isObject()) {
      return new Refusal(null, INVALID_REQUEST, "A JSON-RPC message is an object.");
    }
    JsonNode id = message.get("id");
    if (id != null && !(id.isTextual() || id.isIntegralNumber() || id.isNull())) {
      return new Refusal(null, INVALID_REQUEST, "'id' must be a string or a whole number.");
    }
    if (!"2.0".equals(message.path("jsonrpc").textValue())) {
      return new Refusal(id, INVALID_REQUEST, "'jsonrpc' must be \"2.0\".");
    }
    JsonNode method = message.get("method");
    if (method == null) {
      if (message.has("result") || message.has("error")) {
        // The client's answer to a request of the server's, whose ids are whole numbers: the
        // extension reads an answer's id as a long, and fails on any other (a 500, an ERROR).
        if (id == null || !id.isIntegralNumber() || !id.canConvertToLong()) {
          return new Refusal(
              null,
              INVALID_REQUEST,
              "An answer's 'id' must be the id of the server's request it answers, a whole"
                  + " number.");
        }
        return null;
      }
      return new Refusal(id, INVALID_REQUEST, "'method' is missing.");
    }
    if (!method.isTextual()) {
      return new Refusal(id, INVALID_REQUEST, "'method' must be a string.");
    }
    // JSON-RPC answers a request by its id, and MCP allows no null one: a request without an id
    // would run and be answered with none, or (in a batch) not be found again by its tool.
    if (!method.textValue().startsWith("notifications/") && (id == null || id.isNull())) {
      return new Refusal(
          null,
          INVALID_REQUEST,
          "'id' is "
              + (id == null ? "missing" : "null")
              + ": a request needs an id, a string or a whole number, to be answered; only"
              + " notifications (notifications/...) go without one.");
    }
    JsonNode params = message.get("params");
    if (params != null && !params.isObject()) {
      return new Refusal(id, INVALID_PARAMS, "'params' must be an object.");
    }
    String unstorable = unstorable(message);
    if (unstorable != null) {
      return new Refusal(id, INVALID_PARAMS, unstorable);
    }
    String misshapen = McpParams.whyNot(method.textValue(), params);
    if (misshapen != null) {
      return new Refusal(id, INVALID_PARAMS, misshapen);
    }
    return null;
  }

  /** Null when the body is UTF-8 JSON text as the API reads it; else why not. */
  private static String notUtf8(byte[] bytes) {
    String detail = CheckedJsonReader.notUtf8(bytes);
    if (detail != null) {
      return detail;
    }
    // Valid UTF-8, but never JSON (a NUL must be escaped): UTF-16 or UTF-32 text, most likely.
    for (int at = 0; at < bytes.length; at++) {
      if (bytes[at] == 0) {
        return "The body has a NUL byte (at byte "
            + at
            + "): send JSON text encoded as UTF-8, not UTF-16 or UTF-32.";
      }
    }
    return null;
  }

  /**
   * Why text in the message cannot be stored, in the API's words, or null. The extension's parser
   * refuses such text anywhere with a parse error that has no id and says nothing of where; a tool
   * call's arguments are named as a REST body's fields are.
   */
  private static String unstorable(JsonNode message) {
    for (String name : List.of("id", "method")) {
      JsonNode value = message.path(name);
      if (value.isTextual() && Storable.whyNotText(value.textValue(), false) != null) {
        return "The value of '" + name + "' " + Storable.whyNotText(value.textValue(), false) + ".";
      }
    }
    JsonNode params = message.get("params");
    JsonNode arguments =
        "tools/call".equals(message.path("method").textValue()) && params != null
            ? params.get("arguments")
            : null;
    if (arguments != null && arguments.isObject()) {
      String why = unstorable(arguments, "");
      if (why != null) {
        return why;
      }
      params = params.deepCopy();
      ((ObjectNode) params).remove("arguments");
    }
    return params == null ? null : unstorable(params, "params");
  }

  private static String unstorable(JsonNode value, String at) {
    if (value.isTextual()) {
      String why = Storable.whyNotText(value.textValue(), false);
      return why == null ? null : "The value of '" + at + "' " + why + ".";
    }
    for (int i = 0; value.isArray() && i < value.size(); i++) {
      String why = unstorable(value.get(i), at + "[" + i + "]");
      if (why != null) {
        return why;
      }
    }
    for (Iterator<Map.Entry<String, JsonNode>> fields = value.fields(); fields.hasNext(); ) {
      Map.Entry<String, JsonNode> field = fields.next();
      String whyKey = Storable.whyNotText(field.getKey(), false);
      if (whyKey != null) {
        return (at.isEmpty() ? "An argument's name " : "The value of '" + at + "' has a key that ")
            + whyKey
            + ".";
      }
      String why =
          unstorable(field.getValue(), at.isEmpty() ? field.getKey() : at + "." + field.getKey());
      if (why != null) {
        return why;
      }
    }
    return null;
  }

  private static void refuse(RoutingContext context, JsonNode id, int code, String message) {
    context
        .response()
        .setStatusCode(400)
        .putHeader("Content-Type", "application/json")
        .end(error(id, code, message).toString());
  }

  private static ObjectNode error(JsonNode id, int code, String message) {
    ObjectNode answer = JsonNodeFactory.instance.objectNode();
    answer.put("jsonrpc", "2.0");
    answer.set("id", id == null ? JsonNodeFactory.instance.nullNode() : id);
    answer.putObject("error").put("code", code).put("message", message);
    return answer;
  }

  private static void refuseUnsupported(RoutingContext context, String detail) {
    refuseProblem(context, 415, "Unsupported Media Type", detail);
  }

  /**
   * A refusal as the API answers it, a problem, as the transport's own refusals
   * (McpTransportFailures) are: a 415 or 406 (the body was not read as a JSON-RPC message at all,
   * so there is no message to answer), or a 429 (no session was opened).
   */
  static void refuseProblem(RoutingContext context, int status, String title, String detail) {
    ObjectNode problem = JsonNodeFactory.instance.objectNode();
    problem.put("type", "about:blank");
    problem.put("title", title);
    problem.put("status", status);
    problem.put("detail", detail);
    context
        .response()
        .setStatusCode(status)
        .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
        .end(problem.toString());
  }

  /** The parser's complaint without its location dump, which quotes the body back. */
  private static String reason(IOException e) {
    String message =
        e instanceof JsonProcessingException parsing ? parsing.getOriginalMessage() : "";
    return message == null || message.isBlank() ? "it does not parse." : message;
  }
}
