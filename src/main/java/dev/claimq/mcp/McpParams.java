package dev.claimq.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.time.DateTimeException;
import java.time.Instant;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The params MCP gives each method the MCP extension serves, checked before the extension reads
 * them: it casts what it reads, so a string where the schema has an object was a 500 with an ERROR
 * line, and in completion/complete no answer at all. The shapes are the 2025-06-18 schema's, with
 * the client's icons, description and websiteUrl of 2025-11-25 (the extension serves both). Only
 * the fields the schema names are checked; others pass, as the schema lets them. A list's cursor, a
 * string to the schema, must also be one the extension can read. An optional field sent as null is
 * refused, null being none of the types the schema gives it; only a tool call's null arguments stay
 * "none", as they were.
 */
final class McpParams {
  private McpParams() {}

  private static final String OBJECT = "an object";
  private static final String STRING = "a string";
  private static final String NUMBER = "a number";
  private static final String BOOLEAN = "true or false";
  private static final String ARRAY = "an array";

  /** The methods whose params the schema requires. */
  private static final Set<String> PARAMS_REQUIRED =
      Set.of(
          "initialize",
          "tools/call",
          "prompts/get",
          "resources/read",
          "resources/subscribe",
          "resources/unsubscribe",
          "logging/setLevel",
          "completion/complete",
          "notifications/cancelled",
          "notifications/progress");

  private static final List<String> LOG_LEVELS =
      List.of("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency");

  /**
   * Why these params (null when the message has none; else an object) are not what MCP gives this
   * method, or null when they are. Every request's and notification's _meta is an object; past
   * that, a method MCP does not define passes: the extension answers it as unknown without reading
   * its params.
   */
  static String whyNot(String method, JsonNode params) {
    if (params == null) {
      if ("tools/call".equals(method)) {
        return TOOL_NAME;
      }
      return PARAMS_REQUIRED.contains(method) ? missing("params", method, OBJECT) : null;
    }
    Fields in = new Fields(method, params, "params");
    String meta = first(() -> in.object("_meta", false), () -> progressToken(method, params));
    if (meta != null) {
      return meta;
    }
    return switch (method) {
      case "initialize" ->
          first(
              () -> in.string("protocolVersion", true),
              () -> in.object("capabilities", true),
              () -> capabilities(in.nested("capabilities")),
              () -> in.object("clientInfo", true),
              () -> implementation(in.nested("clientInfo")));
      case "tools/list", "prompts/list", "resources/list", "resources/templates/list" ->
          first(() -> in.string("cursor", false), () -> cursor(params.get("cursor")));
      case "tools/call" -> toolCall(params);
      case "prompts/get" ->
          first(() -> in.string("name", true), () -> in.strings("arguments", false));
      case "resources/read", "resources/subscribe", "resources/unsubscribe" ->
          in.string("uri", true);
      case "logging/setLevel" -> in.oneOf("level", LOG_LEVELS);
      case "completion/complete" -> completion(in);
      case "notifications/cancelled" ->
          first(() -> in.id("requestId"), () -> in.string("reason", false));
      case "notifications/progress" ->
          first(
              () -> in.token("progressToken", true),
              () -> in.number("progress", true),
              () -> in.number("total", false),
              () -> in.string("message", false));
      default -> null;
    };
  }

  private static final String TOOL_NAME = "'params.name' must name a tool, as a string.";

  /** The length of a cursor the extension gives, decoded: two instants, each seconds and nanos. */
  private static final int CURSOR_BYTES = 2 * (Long.BYTES + Integer.BYTES);

  /**
   * A list's cursor, which MCP makes opaque to the client: a nextCursor the server gave, sent back
   * as it was. The extension's are Base64 of two instants; one it cannot read as that it refuses
   * itself, but with a WARN line that quotes it, as if the fault were the service's.
   */
  private static String cursor(JsonNode cursor) {
    if (cursor == null) {
      return null;
    }
    try {
      byte[] bytes = Base64.getDecoder().decode(cursor.textValue());
      if (bytes.length == CURSOR_BYTES) {
        ByteBuffer instants = ByteBuffer.wrap(bytes);
        for (int i = 0; i < 2; i++) {
          Instant.ofEpochSecond(instants.getLong(), instants.getInt());
        }
        return null;
      }
    } catch (IllegalArgumentException | DateTimeException | ArithmeticException notOurs) {
      // not Base64, or an instant past what Instant holds
    }
    return "'params.cursor' is not a cursor this server gave: send an earlier answer's nextCursor"
        + " as it was, or no cursor for the first page.";
  }

  /** A request's progress token, which the extension hands back in its notifications. */
  private static String progressToken(String method, JsonNode params) {
    JsonNode meta = params.get("_meta");
    if (method.startsWith("notifications/") || meta == null) {
      return null;
    }
    return new Fields(method, meta, "params._meta").token("progressToken", false);
  }

  private static String toolCall(JsonNode params) {
    if (!params.path("name").isTextual()) {
      return TOOL_NAME;
    }
    JsonNode arguments = params.get("arguments");
    // Null stays "no arguments", as it has been: each tool then names what it is missing.
    if (arguments != null && !arguments.isObject() && !arguments.isNull()) {
      return "'params.arguments' must be an object of the tool's arguments, by name.";
    }
    return null;
  }

  private static String capabilities(Fields capabilities) {
    return first(
        () -> capabilities.objects("experimental"),
        () -> capabilities.object("roots", false),
        () -> capabilities.nested("roots").bool("listChanged"),
        () -> capabilities.object("sampling", false),
        () -> capabilities.object("elicitation", false));
  }

  /** The client's name and version, with what 2025-11-25 added: icons, description, websiteUrl. */
  private static String implementation(Fields client) {
    return first(
        () -> client.string("name", true),
        () -> client.string("version", true),
        () -> client.string("title", false),
        () -> client.string("description", false),
        () -> client.string("websiteUrl", false),
        () -> client.array("icons"),
        () -> client.each("icons", McpParams::icon));
  }

  private static String icon(Fields icon) {
    return first(
        () -> icon.object(),
        () -> icon.string("src", true),
        () -> icon.string("mimeType", false),
        () -> icon.array("sizes"),
        () -> icon.each("sizes", Fields::string),
        () -> icon.oneOf("theme", List.of("light", "dark"), false));
  }

  private static String completion(Fields in) {
    Fields ref = in.nested("ref");
    String type = ref.node.path("type").textValue();
    return first(
        () -> in.object("ref", true),
        () -> ref.oneOf("type", List.of("ref/prompt", "ref/resource")),
        () -> ref.string("ref/prompt".equals(type) ? "name" : "uri", true),
        () -> in.object("argument", true),
        () -> in.nested("argument").string("name", true),
        () -> in.nested("argument").string("value", true),
        () -> in.object("context", false),
        () -> in.nested("context").strings("arguments", false));
  }

  /** The first reason, or null; each check runs only once those before it have passed. */
  @SafeVarargs
  private static String first(Supplier<String>... checks) {
    for (Supplier<String> check : checks) {
      String why = check.get();
      if (why != null) {
        return why;
      }
    }
    return null;
  }

  private static String missing(String at, String method, String type) {
    return "'" + at + "' is missing: " + method + " needs it, as " + type + ".";
  }

  /** The fields of one object of the params, named for a reader by where they are. */
  private record Fields(String method, JsonNode node, String at) {
    Fields nested(String name) {
      return new Fields(method, node.path(name), at + "." + name);
    }

    String object() {
      return node.isObject() ? null : "'" + at + "' must be " + OBJECT + ".";
    }

    String object(String name, boolean required) {
      return check(name, required, OBJECT, JsonNode::isObject);
    }

    String string(String name, boolean required) {
      return check(name, required, STRING, JsonNode::isTextual);
    }

    /** An array's item, which must be a string. */
    String string() {
      return node.isTextual() ? null : "'" + at + "' must be " + STRING + ".";
    }

    String number(String name, boolean required) {
      return check(name, required, NUMBER, JsonNode::isNumber);
    }

    String bool(String name) {
      return check(name, false, BOOLEAN, JsonNode::isBoolean);
    }

    String array(String name) {
      return check(name, false, ARRAY, JsonNode::isArray);
    }

    /** A progress token: a string or a number. */
    String token(String name, boolean required) {
      return check(
          name, required, "a string or a number", value -> value.isTextual() || value.isNumber());
    }

    /** A request's id, as the envelope takes ids: a string or a whole number. */
    String id(String name) {
      return check(
          name,
          true,
          "a string or a whole number",
          value -> value.isTextual() || value.isIntegralNumber());
    }

    String oneOf(String name, List<String> values) {
      return oneOf(name, values, true);
    }

    String oneOf(String name, List<String> values, boolean required) {
      return check(
          name,
          required,
          "one of " + String.join(", ", values),
          value -> value.isTextual() && values.contains(value.textValue()));
    }

    /** An object whose values are all objects (experimental capabilities). */
    String objects(String name) {
      return first(() -> object(name, false), () -> eachField(name, OBJECT, JsonNode::isObject));
    }

    /** An object whose values are all strings (a prompt's or a completion's arguments). */
    String strings(String name, boolean required) {
      return first(
          () -> object(name, required), () -> eachField(name, STRING, JsonNode::isTextual));
    }

    /** Each item of an array that has been checked to be one, or is absent. */
    String each(String name, Function<Fields, String> check) {
      JsonNode items = node.path(name);
      for (int i = 0; items.isArray() && i < items.size(); i++) {
        String why = check.apply(new Fields(method, items.get(i), at + "." + name + "[" + i + "]"));
        if (why != null) {
          return why;
        }
      }
      return null;
    }

    private String eachField(String name, String type, Predicate<JsonNode> fits) {
      JsonNode object = node.path(name);
      for (Iterator<Map.Entry<String, JsonNode>> fields = object.fields(); fields.hasNext(); ) {
        Map.Entry<String, JsonNode> field = fields.next();
        if (!fits.test(field.getValue())) {
          return "'" + at + "." + name + "." + field.getKey() + "' must be " + type + ".";
        }
      }
      return null;
    }

    private String check(String name, boolean required, String type, Predicate<JsonNode> fits) {
      JsonNode value = node.get(name);
      if (value == null) {
        return required ? missing(at + "." + name, method, type) : null;
      }
      return fits.test(value) ? null : "'" + at + "." + name + "' must be " + type + ".";
    }
  }
}
