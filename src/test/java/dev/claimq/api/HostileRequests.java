package dev.claimq.api;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hostile requests for every operation of the committed OpenAPI document: for each body field and
 * each path or query parameter, each class of hostile input, built from the operation's valid base
 * request by one mutation. The full scale adds random variants (positions, lengths, values) and
 * random combinations of mutations of different fields.
 *
 * <p>Requests are built late ({@link #draft}), from the items they aim at, so that a hostile
 * complete carries the real claim token of a held item: a mutation that slipped through would
 * change that item, and the test would see it. Bodies are written by a writer of their own ({@link
 * Json}), since no JSON library writes duplicate keys, lone surrogates or bytes that are not UTF-8.
 */
final class HostileRequests {
  private static final String NUL = "NUL";
  private static final String SURROGATE = "lone surrogate";
  private static final String INVALID_UTF8 = "invalid UTF-8";
  private static final String NUMBERS = "numbers changed on the way in";
  private static final String DUPLICATE_KEYS = "duplicate keys";
  private static final String RUN_AT = "runAt out of range";
  private static final String WRONG_TYPE = "wrong JSON type";
  private static final String MISSING = "missing or blank field";
  private static final String UNKNOWN_FIELD = "unknown field";
  private static final String HUGE = "huge strings and bodies";
  private static final String NESTING = "deep nesting";
  private static final String INTEGERS = "bad integer";
  private static final String MARKS = "RTL and zero-width marks";
  private static final String MALFORMED = "malformed JSON";
  private static final String EMPTY_BODY = "empty body";
  private static final String CONTENT_TYPE = "content type";
  private static final String CHUNKED = "chunked body";
  private static final String STRAY_BODY = "body where none belongs";
  private static final String METHOD = "method";
  private static final String PATH = "path parameter";
  private static final String QUERY = "query parameter";
  private static final String REPEATED_QUERY = "repeated query parameter";
  private static final String HEADER = "header parameter";
  private static final String COMBINED = "combined mutations";

  /** What a hostile request must get. */
  enum Expect {
    /** One of its refusal statuses (for a batch: or 200 with every entry refused). */
    REFUSED,
    /** Valid or not, only a well-formed answer: no 5xx, and a 4xx is a problem. */
    WELL_FORMED,
    /** Valid: a 2xx (for a batch: every entry accepted). */
    ACCEPTED,
    /** Valid: created, and the item reads back with exactly the dedupeKey and payload sent. */
    STORED_EXACTLY,
    /** Created with the payload that jsonb stores for the literal sent, or 400: never rounded. */
    STORED_AS_JSONB
  }

  /** Where a request goes: at the snapshot items (it must change nothing) or at scratch items. */
  enum Against {
    SNAPSHOT,
    SCRATCH
  }

  /** The refusals of a body the service cannot take: never 404, since the item exists. */
  static final Set<Integer> INVALID_BODY = Set.of(400, 413);

  /** A claim token with NUL or a lone surrogate may also be answered as no current claim. */
  static final Set<Integer> INVALID_TOKEN = Set.of(400, 409, 413);

  static final Set<Integer> UNSUPPORTED_BODY = Set.of(400, 415);
  static final Set<Integer> BAD_PARAMETER = Set.of(400, 404, 405, 414);
  static final Set<Integer> BAD_QUERY = Set.of(400, 414);
  static final Set<Integer> BAD_METHOD = Set.of(404, 405);

  /** One hostile request: its class, what it does, and what it must get. */
  record Hostile(
      String hostileClass,
      Operation operation,
      String what,
      Expect expect,
      Set<Integer> refusals,
      Against against,
      Field field,
      Consumer<Draft> mutation) {
    /** An edit of one field that is refused, and stays refused with edits of other fields. */
    boolean combinable() {
      return field != null && expect == Expect.REFUSED && against == Against.SNAPSHOT;
    }
  }

  /** The items a request aims at: one in each state, in one queue. */
  record Targets(
      String queue,
      String pending,
      String held,
      String token,
      String done,
      String failed,
      String cancelled,
      String awaiting,
      String cursor,
      String queuesCursor) {}

  /** A request as it goes on the wire: the target is path and query, percent-encoded as sent. */
  record Request(
      String method,
      String target,
      String contentType,
      byte[] body,
      boolean chunked,
      Map<String, String> headers) {
    Request(String method, String target, String contentType, byte[] body, boolean chunked) {
      this(method, target, contentType, body, chunked, Map.of());
    }
  }

  /** One field of a request body: where it sits, its schema, and its level's required fields. */
  record Field(List<Object> path, String name, JsonNode spec, Set<String> requiredHere) {
    String kind() {
      String type = typeOf(spec);
      return type.isEmpty() ? "json" : type;
    }

    /** The document types it with null: sent as null, it is taken as left out. */
    boolean nullable() {
      for (JsonNode type : spec.path("type")) {
        if (type.asText().equals("null")) {
          return true;
        }
      }
      return false;
    }

    boolean required() {
      return requiredHere.contains(name);
    }

    /** A default the document gives: left out, the field takes it; null must not (README). */
    boolean hasDefault() {
      return spec.has("default");
    }

    List<Object> parent() {
      return path.subList(0, path.size() - 1);
    }

    boolean isTime() {
      return "date-time".equals(spec.path("format").asText());
    }

    /** The field as a reader would name it, e.g. items[0].claimToken. */
    String label() {
      StringBuilder label = new StringBuilder();
      for (Object step : path) {
        if (step instanceof Integer index) {
          label.append('[').append(index).append(']');
        } else {
          label.append(label.length() == 0 ? "" : ".").append(step);
        }
      }
      return label.toString();
    }
  }

  /** One operation of the document. */
  record Operation(
      String method,
      String path,
      List<String> pathParameters,
      Map<String, JsonNode> queryParameters,
      List<String> headerParameters,
      JsonNode bodySchema,
      boolean bodyRequired,
      List<Field> fields) {
    String label() {
      return method.toUpperCase(Locale.ROOT) + " " + path;
    }

    boolean takesBody() {
      return bodySchema != null;
    }

    /** Where one entry of the body sits: the body itself, or the first entry of a batch. */
    List<Object> entry() {
      return fields.stream()
          .filter(field -> field.kind().equals("array") && field.path().size() == 1)
          .map(field -> List.<Object>of(field.name(), 0))
          .findFirst()
          .orElse(List.of());
    }

    boolean batch() {
      return !entry().isEmpty();
    }

    boolean enqueues() {
      return fields.stream().anyMatch(field -> field.name().equals("dedupeKey"));
    }
  }

  private static final double[] POSITIONS = {0, 0.5, 1};
  private static final byte[] NUL_ESCAPE = ascii("\\u0000");
  private static final List<String> SURROGATES = List.of("\\ud800", "\\udfff");
  private static final List<byte[]> INVALID_SEQUENCES =
      List.of(bytes(0xFF), bytes(0xED, 0xA0, 0x80), bytes(0xE2, 0x82));

  /** More ways for bytes not to be UTF-8, for the random variants: overlong, cut, too high. */
  private static final List<byte[]> MORE_INVALID_SEQUENCES =
      List.of(
          bytes(0xFE),
          bytes(0x80),
          bytes(0xBF),
          bytes(0xC0, 0xAF),
          bytes(0xC1, 0xBF),
          bytes(0xC3),
          bytes(0xE0, 0x80, 0x80),
          bytes(0xED, 0xBF, 0xBF),
          bytes(0xF0, 0x9F, 0x92),
          bytes(0xF4, 0x90, 0x80, 0x80),
          bytes(0xF8, 0x88, 0x80, 0x80, 0x80));

  /** Right-to-left override, zero-width space, zero-width no-break space: valid characters. */
  private static final char[] MARK_CHARS = {'\u202E', '\u200B', '\uFEFF'};

  /** Times PostgreSQL cannot hold, or that are no RFC 3339 time with a four-digit year. */
  private static final List<String> RUN_AT_OUT_OF_RANGE =
      List.of(
          "+300000-01-01T00:00:00Z",
          "+10000-01-01T00:00:00Z",
          "0000-01-01T00:00:00Z",
          "-000001-01-01T00:00:00Z",
          "-300000-01-01T00:00:00Z");

  /** Numbers a double would change; jsonb keeps them as written, or cannot hold them at all. */
  private static final List<String> CHANGED_NUMBERS =
      List.of("1e309", "0.30000000000000000001", "1e1000000", "-0", "1.50");

  private static final List<String> MORE_CHANGED_NUMBERS =
      List.of(
          "1e-400",
          "-1e309",
          "9223372036854775808",
          "123456789012345678901234567890.0123456789",
          "-0.0",
          "1E+2",
          "0.1e1",
          "2.50e-3");

  /**
   * Fields stored with control characters dropped (the README: failure reasons are sanitized before
   * storage), so that a NUL in them is valid.
   */
  private static final Set<String> SANITIZED = Set.of("error");

  private static final List<String> CONTENT_TYPES =
      Arrays.asList("text/plain", "application/xml", null, "application/x-www-form-urlencoded");

  private static final List<String> BAD_LIMITS =
      List.of("-1", "0", "501", "abc", "1e3", "1.5", "-0", "2147483648", "%2010", "0x10");

  private static final String TO = "ada@example.com";
  private static final String VALID_RUN_AT = "2026-01-01T00:00:00Z";
  private static final int DEEP = 10_000;
  private static final int HUGE_STRING = 300_000;
  private static final int OVER_THE_BODY_LIMIT = 1_200_000;

  private final JsonNode document;
  private final Random random;
  private final int variants;
  private final int combinations;
  private final List<Operation> operations = new ArrayList<>();
  private final List<Hostile> hostiles = new ArrayList<>();

  HostileRequests(JsonNode document, Random random, boolean full) {
    this.document = document;
    this.random = random;
    this.variants = full ? 80 : 1;
    this.combinations = full ? 5_000 : 250;
    for (Map.Entry<String, JsonNode> path : document.path("paths").properties()) {
      for (Map.Entry<String, JsonNode> method : path.getValue().properties()) {
        operations.add(operation(path.getKey(), method.getKey(), method.getValue()));
      }
    }
  }

  List<Operation> operations() {
    return operations;
  }

  /** Every hostile request, in the order to send them. */
  List<Hostile> generate() {
    for (Operation op : operations) {
      Mutations mutations = new Mutations(op);
      if (op.takesBody()) {
        for (Field field : op.fields()) {
          switch (field.kind()) {
            case "string" -> mutations.string(field);
            case "integer" -> mutations.integer(field);
            case "boolean" -> mutations.bool(field);
            case "array" -> mutations.array(field);
            case "json" -> mutations.payload(field);
            case "object" -> mutations.object(field);
            default -> throw new IllegalStateException("cannot vary " + field.label());
          }
          mutations.duplicateKeys(field);
        }
        mutations.missingFields();
        mutations.wholeBody();
        if (op.enqueues()) {
          mutations.numbers();
        }
      } else {
        mutations.strayBody();
      }
      op.pathParameters().forEach(mutations::pathParameter);
      op.queryParameters().keySet().forEach(mutations::queryParameter);
      op.headerParameters().forEach(mutations::headerParameter);
    }
    methods();
    combine();
    return hostiles;
  }

  // ---- the base request ------------------------------------------------------------------

  /** The operation's valid base request against these items. */
  Draft draft(Operation op, Targets targets, String dedupeKey) {
    Draft draft = new Draft(op.method().toUpperCase(Locale.ROOT), op.path());
    for (String parameter : op.pathParameters()) {
      draft.path.put(
          parameter,
          switch (parameter) {
            case "queue" -> targets.queue();
            case "id" -> itemFor(op, targets);
            default -> throw new IllegalStateException("no base value for " + parameter);
          });
    }
    for (Map.Entry<String, JsonNode> parameter : op.queryParameters().entrySet()) {
      String name = parameter.getKey();
      String value =
          switch (name) {
            case "queue" -> targets.queue();
            case "cursor" ->
                op.path().equals("/v1/queues") ? targets.queuesCursor() : targets.cursor();
            case "reason", "q" -> "boom";
            case "updatedAfter" -> "1970-01-01T00:00:00Z";
            case "updatedBefore" -> "9999-12-31T23:59:59Z";
            default -> queryValue(name, parameter.getValue().path("schema"));
          };
      draft.query.add(new String[] {name, value});
    }
    if (op.takesBody()) {
      draft.body = baseObject(op.bodySchema(), targets, dedupeKey);
      draft.contentType = "application/json";
    }
    return draft;
  }

  /** The item whose state a valid call would change, so that a slipped mutation shows. */
  private static String itemFor(Operation op, Targets targets) {
    String path = op.path();
    if (path.endsWith("/claim") || path.endsWith("/cancel")) {
      return targets.pending();
    }
    if (path.endsWith("/complete")
        || path.endsWith("/fail")
        || path.endsWith("/heartbeat")
        || path.endsWith("/intent")
        || path.endsWith("/release")) {
      return targets.held();
    }
    if (path.endsWith("/retry") || path.endsWith("/resolve")) {
      return targets.failed();
    }
    if (path.endsWith("/approve") || path.endsWith("/reject")) {
      return targets.awaiting();
    }
    if (op.method().equals("get")) {
      return targets.done();
    }
    throw new IllegalStateException("say in itemFor which item " + op.label() + " aims at");
  }

  /** A valid value from a query parameter's schema: its first enum value, or its default. */
  private static String queryValue(String name, JsonNode schema) {
    if (schema.has("enum")) {
      return schema.path("enum").path(0).asText();
    }
    if (schema.has("default")) {
      return schema.path("default").asText();
    }
    throw new IllegalStateException("no base value for the query parameter " + name);
  }

  private Json.Obj baseObject(JsonNode schema, Targets targets, String dedupeKey) {
    Json.Obj body = new Json.Obj();
    for (Map.Entry<String, JsonNode> property : schema.path("properties").properties()) {
      JsonNode spec = resolve(property.getValue());
      body.put(property.getKey(), baseValue(property.getKey(), spec, targets, dedupeKey));
    }
    return body;
  }

  private Object baseValue(String name, JsonNode spec, Targets targets, String dedupeKey) {
    switch (name) {
      case "claimToken":
        return targets.token();
      case "id":
        return targets.held();
      case "dedupeKey":
        return dedupeKey;
      case "runAt":
        return VALID_RUN_AT;
      case "updatedAfter":
        return "1970-01-01T00:00:00Z";
      case "updatedBefore":
        return "9999-12-31T23:59:59Z";
      case "queue":
        return targets.queue();
      case "dryRun":
        return true; // a valid bulk call that changes nothing
      case "previewTag":
        return null; // a dry run confirms no earlier one: its mutations start from nothing
      default:
        break;
    }
    String type = typeOf(spec);
    return switch (type) {
      case "string" ->
          spec.has("enum")
              ? spec.path("enum").path(0).asText()
              : spec.path("examples").path(0).asText("x");
      case "integer" ->
          spec.has("default")
              ? spec.path("default").asLong()
              : Math.max(1, spec.path("minimum").asLong(1));
      case "boolean" -> spec.path("default").asBoolean(true);
      case "array" ->
          new ArrayList<>(List.of(baseObject(resolve(spec.path("items")), targets, dedupeKey)));
      case "object" -> baseObject(spec, targets, dedupeKey);
      case "" -> Json.from(spec.path("examples").path(0));
      default -> throw new IllegalStateException("no base value for " + name + ": " + type);
    };
  }

  // ---- the mutations of one operation ----------------------------------------------------

  /** The hostile variants of one operation, added to the list in the order written. */
  private final class Mutations {
    private final Operation op;

    Mutations(Operation op) {
      this.op = op;
    }

    void string(Field field) {
      for (double at : POSITIONS) {
        nul(field, "with \\u0000 " + where(at), spliced(at, NUL_ESCAPE));
      }
      nul(field, "= \"\\u0000\"", base -> Json.raw("\"\\u0000\""));
      edit(NUL, field, "with raw C0 80 (overlong NUL)", spliced(0.5, bytes(0xC0, 0x80)));
      edit(NUL, field, "with a raw 00 byte", spliced(0.5, bytes(0x00)));
      for (String surrogate : SURROGATES) {
        for (double at : POSITIONS) {
          edit(SURROGATE, field, "with " + surrogate + " " + where(at), spliced(at, surrogate));
        }
      }
      edit(SURROGATE, field, "with \\udfff\\ud800 (reversed)", spliced(0.5, "\\udfff\\ud800"));
      for (byte[] sequence : INVALID_SEQUENCES) {
        edit(INVALID_UTF8, field, "with bytes " + hex(sequence), spliced(0.5, sequence));
      }
      for (char mark : MARK_CHARS) {
        String name = codePoint(mark);
        marks(field, "with raw " + name + " at the start", spliced(0, utf8(mark), mark));
        marks(field, "with raw " + name + " at the end", spliced(1, utf8(mark), mark));
        marks(field, "with " + name + " as \\u escape", spliced(0.5, ascii(escape(mark)), mark));
      }
      marks(field, "= all three marks", base -> "\u202E\u200B\uFEFF");
      if (field.spec().has("maxLength")) {
        int max = field.spec().path("maxLength").asInt();
        edit(HUGE, field, "of " + (max + 1) + " characters", base -> pad(base, max + 1, "x"));
      }
      edit(HUGE, field, "of 300 KB", base -> pad(base, HUGE_STRING, "x"));
      wrongTypes(field);
      deepNesting(field);
      if (field.spec().path("minLength").asInt(0) > 0 || field.spec().has("pattern")) {
        edit(MISSING, field, "= \"\"", base -> "");
      }
      if (field.spec().has("pattern")) {
        edit(MISSING, field, "blank", base -> " \t\n");
      }
      if (field.isTime()) {
        for (String time : RUN_AT_OUT_OF_RANGE) {
          edit(RUN_AT, field, "= " + time, base -> time);
        }
      }
      for (int i = 0; i < variants; i++) {
        randomStringVariants(field);
      }
    }

    /** The same classes at random positions, in random numbers and lengths. */
    private void randomStringVariants(Field field) {
      double at = random.nextDouble();
      int count = 1 + random.nextInt(3);
      nul(field, "with " + count + " \\u0000 " + where(at), spliced(at, "\\u0000".repeat(count)));
      String surrogate = String.format("\\u%04x", 0xD800 + random.nextInt(0x800));
      double surrogateAt = random.nextDouble();
      String what = "with " + surrogate + " " + where(surrogateAt);
      edit(SURROGATE, field, what, spliced(surrogateAt, surrogate));
      byte[] sequence = pick(MORE_INVALID_SEQUENCES);
      double sequenceAt = random.nextDouble();
      what = "with bytes " + hex(sequence) + " " + where(sequenceAt);
      edit(INVALID_UTF8, field, what, spliced(sequenceAt, sequence));
      char mark = MARK_CHARS[random.nextInt(MARK_CHARS.length)];
      double markAt = random.nextDouble();
      boolean escaped = random.nextBoolean();
      what = "with " + codePoint(mark) + (escaped ? " escaped " : " raw ") + where(markAt);
      marks(field, what, spliced(markAt, escaped ? ascii(escape(mark)) : utf8(mark), mark));
      if (field.spec().has("maxLength")) {
        int max = field.spec().path("maxLength").asInt();
        int length = max + 1 + random.nextInt(Math.min(HUGE_STRING, max * 4));
        String filler = random.nextBoolean() ? "x" : "\u00e9"; // two bytes of UTF-8
        edit(HUGE, field, "of " + length + " characters", base -> pad(base, length, filler));
      }
      if (field.isTime()) {
        long year = 10_000 + random.nextInt(999_990_000);
        String time = (random.nextBoolean() ? "+" : "-") + year + "-06-15T12:00:00Z";
        edit(RUN_AT, field, "= " + time, base -> time);
      }
    }

    /** NUL is refused, except in a field stored with its control characters dropped. */
    private void nul(Field field, String what, UnaryOperator<Object> change) {
      if (SANITIZED.contains(field.name())) {
        scratch(NUL, field.label() + " " + what, Expect.WELL_FORMED, setting(field, change));
      } else {
        edit(NUL, field, what, change);
      }
    }

    /** Marks are valid characters: stored as sent on enqueue, and never a 5xx anywhere. */
    private void marks(Field field, String what, UnaryOperator<Object> change) {
      boolean enqueued = op.enqueues() && field.name().equals("dedupeKey");
      Expect expect = enqueued ? Expect.STORED_EXACTLY : Expect.WELL_FORMED;
      scratch(MARKS, field.label() + " " + what, expect, setting(field, change));
    }

    /** An optional object (e.g. next) as any other JSON type; {} is valid, so not that. */
    void object(Field field) {
      edit(WRONG_TYPE, field, "as a number", base -> 12345);
      edit(WRONG_TYPE, field, "as a string", base -> "7");
      edit(WRONG_TYPE, field, "as true", base -> true);
      edit(WRONG_TYPE, field, "as an array", base -> Json.listOf(1));
    }

    private void wrongTypes(Field field) {
      String kind = field.kind();
      if (!kind.equals("integer")) {
        edit(WRONG_TYPE, field, "as a number", base -> 12345);
      }
      if (!kind.equals("string")) {
        edit(WRONG_TYPE, field, "as a string", base -> "7");
      }
      if (!kind.equals("boolean")) {
        edit(WRONG_TYPE, field, "as true", base -> true);
      }
      if (!kind.equals("array")) {
        edit(WRONG_TYPE, field, "as an array", base -> Json.listOf(1));
      }
      edit(WRONG_TYPE, field, "as an object", base -> new Json.Obj());
      if (!field.nullable()) {
        edit(WRONG_TYPE, field, "as null", base -> null);
      }
    }

    private void deepNesting(Field field) {
      edit(NESTING, field, "as arrays nested 10,000 deep", base -> Json.deepArrays(DEEP));
      edit(NESTING, field, "as objects nested 10,000 deep", base -> Json.deepObjects(DEEP));
      for (int i = 0; i < variants / 3; i++) {
        int depth = DEEP + random.nextInt(4 * DEEP);
        boolean arrays = random.nextBoolean();
        String what = "as " + (arrays ? "arrays" : "objects") + " nested " + depth + " deep";
        edit(
            NESTING,
            field,
            what,
            base -> arrays ? Json.deepArrays(depth) : Json.deepObjects(depth));
      }
    }

    void integer(Field field) {
      JsonNode spec = field.spec();
      BigInteger max = spec.has("maximum") ? spec.path("maximum").bigIntegerValue() : null;
      BigInteger min = spec.has("minimum") ? spec.path("minimum").bigIntegerValue() : null;
      Set<String> outOfRange = new LinkedHashSet<>();
      if (max != null) {
        outOfRange.add(max.add(BigInteger.ONE).toString());
      }
      if (min != null) {
        outOfRange.add(min.subtract(BigInteger.ONE).toString());
      }
      outOfRange.addAll(List.of("2147483648", "-2147483649", "9223372036854775808"));
      outOfRange.addAll(List.of("-9223372036854775809", "1" + "0".repeat(30)));
      for (int i = 0; i < variants; i++) {
        BigInteger beyond = new BigInteger(1 + random.nextInt(128), random).add(BigInteger.ONE);
        outOfRange.add((max == null ? beyond : max.add(beyond)).toString());
        outOfRange.add((min == null ? beyond.negate() : min.subtract(beyond)).toString());
      }
      for (String number : outOfRange) {
        edit(INTEGERS, field, "= " + Json.abbreviate(number), base -> Json.raw(number));
      }
      List<String> notWhole = new ArrayList<>(List.of("1.5", "1.0", "1e2", "1e30"));
      for (int i = 0; i < variants; i++) {
        notWhole.add(random.nextInt(100) + "." + random.nextInt(1000) + "e" + random.nextInt(5));
      }
      for (String number : notWhole) {
        edit(INTEGERS, field, "= " + number + " (not in integer form)", base -> Json.raw(number));
      }
      // -0 reads as 0: fine where 0 is in range, refused where it is not.
      boolean zeroInRange =
          (min == null || min.signum() <= 0) && (max == null || max.signum() >= 0);
      if (zeroInRange) {
        String what = field.label() + " = -0 (that is 0, in range)";
        scratch(INTEGERS, what, Expect.WELL_FORMED, setting(field, base -> Json.raw("-0")));
      } else {
        edit(INTEGERS, field, "= -0 (that is 0, out of range)", base -> Json.raw("-0"));
      }
      wrongTypes(field);
      deepNesting(field);
    }

    void bool(Field field) {
      edit(WRONG_TYPE, field, "as the string \"true\"", base -> "true");
      edit(WRONG_TYPE, field, "as 1", base -> 1);
      edit(WRONG_TYPE, field, "as 0", base -> 0);
      wrongTypes(field);
      deepNesting(field);
    }

    void array(Field field) {
      int maxItems = field.spec().path("maxItems").asInt(500);
      edit(MISSING, field, "= [] (no entries)", base -> new ArrayList<>());
      // Not combinable: the entry is repeated, and with it any other edit of it.
      String tooMany = field.label() + " with " + (maxItems + 1) + " entries";
      refused(HUGE, tooMany, setting(field, base -> repeat(base, maxItems + 1)));
      edit(WRONG_TYPE, field, "= [null]", base -> Json.listOf((Object) null));
      edit(WRONG_TYPE, field, "= [1]", base -> Json.listOf(1));
      edit(WRONG_TYPE, field, "= [\"x\"]", base -> Json.listOf("x"));
      wrongTypes(field);
      deepNesting(field);
      for (int i = 0; i < variants / 3; i++) {
        int count = maxItems + 1 + random.nextInt(maxItems);
        refused(
            HUGE,
            field.label() + " with " + count + " entries",
            setting(field, base -> repeat(base, count)));
      }
    }

    void payload(Field field) {
      edit(WRONG_TYPE, field, "as null", base -> null);
      for (double at : POSITIONS) {
        edit(NUL, field, "string with \\u0000 " + where(at), inValue(at, NUL_ESCAPE));
      }
      edit(NUL, field, "key \"\\u0000\"", base -> Json.obj(Json.raw("\"\\u0000\""), TO));
      edit(NUL, field, "key with \\u0000 inside", inKey(0.5, NUL_ESCAPE));
      edit(NUL, field, "string with raw C0 80 (overlong NUL)", inValue(0.5, bytes(0xC0, 0x80)));
      edit(NUL, field, "key with raw C0 80", inKey(0.5, bytes(0xC0, 0x80)));
      edit(
          NUL,
          field,
          "nested string \"\\u0000\"",
          base -> Json.obj("x", Json.listOf(Json.obj("y", Json.raw("\"\\u0000\"")))));
      for (String surrogate : SURROGATES) {
        edit(SURROGATE, field, "string with " + surrogate, inValue(0.5, ascii(surrogate)));
        edit(SURROGATE, field, "key with " + surrogate, inKey(1, ascii(surrogate)));
      }
      edit(SURROGATE, field, "= [\"\\ud800\"]", base -> Json.listOf(Json.raw("\"\\ud800\"")));
      edit(SURROGATE, field, "= \"\\udfff\"", base -> Json.raw("\"\\udfff\""));
      for (byte[] sequence : INVALID_SEQUENCES) {
        edit(INVALID_UTF8, field, "string with bytes " + hex(sequence), inValue(0.5, sequence));
        edit(INVALID_UTF8, field, "key with bytes " + hex(sequence), inKey(0, sequence));
      }
      for (char mark : MARK_CHARS) {
        String name = codePoint(mark);
        stored(field, "string with raw " + name, inValue(0.5, utf8(mark), mark));
        stored(
            field, "string with " + name + " as \\u escape", inValue(0, ascii(escape(mark)), mark));
        stored(field, "key with raw " + name, inKey(0, utf8(mark), mark));
        stored(field, "key with " + name + " as \\u escape", inKey(1, ascii(escape(mark)), mark));
      }
      stored(field, "= only the three marks", base -> "\u202E\u200B\uFEFF");
      edit(HUGE, field, "with a 300 KB string", base -> Json.obj("to", "x".repeat(HUGE_STRING)));
      edit(NESTING, field, "= arrays nested 10,000 deep", base -> Json.deepArrays(DEEP));
      edit(NESTING, field, "= objects nested 10,000 deep", base -> Json.deepObjects(DEEP));
      edit(
          NESTING,
          field,
          "holding arrays 10,000 deep",
          base -> Json.obj("to", Json.deepArrays(DEEP)));
      edit(DUPLICATE_KEYS, field, "{\"to\",\"to\"}", base -> Json.obj("to", "a@b.c").add("to", TO));
      edit(
          DUPLICATE_KEYS,
          field,
          "{\"to\",\"template\",\"to\"}, one value",
          base -> Json.obj("to", TO).add("template", "welcome").add("to", TO));
      edit(
          DUPLICATE_KEYS,
          field,
          "{\"x\":{\"k\",\"k\"}}",
          base -> Json.obj("x", Json.obj("k", 1).add("k", 2)));
      edit(
          DUPLICATE_KEYS,
          field,
          "[{\"k\",\"k\"}]",
          base -> Json.listOf(Json.obj("k", 1).add("k", 1)));
      for (int i = 0; i < variants; i++) {
        randomPayloadVariants(field);
      }
    }

    /** A hostile string or key at a random place of a random payload, and a valid mark. */
    private void randomPayloadVariants(Field field) {
      int width = 1 + random.nextInt(6);
      int hostileAt = random.nextInt(width);
      boolean inKey = random.nextBoolean();
      int kind = random.nextInt(3);
      String hostileClass = kind == 0 ? NUL : kind == 1 ? SURROGATE : INVALID_UTF8;
      byte[] inserted =
          switch (kind) {
            case 0 -> NUL_ESCAPE;
            case 1 -> ascii(String.format("\\u%04x", 0xD800 + random.nextInt(0x800)));
            default -> pick(MORE_INVALID_SEQUENCES);
          };
      double at = random.nextDouble();
      String shown = kind == 2 ? "bytes " + hex(inserted) : new String(inserted, US_ASCII);
      String what = (inKey ? "key " : "string ") + (hostileAt + 1) + " of " + width + " with ";
      edit(
          hostileClass,
          field,
          what + shown + " " + where(at),
          base -> {
            Json.Obj payload = new Json.Obj();
            for (int i = 0; i < width; i++) {
              Object name = "k" + i;
              Object value = "value " + i;
              if (i == hostileAt && inKey) {
                name = Json.splice("k" + i, at, inserted, null);
              } else if (i == hostileAt) {
                value = Json.splice("value " + i, at, inserted, null);
              }
              payload.add(name, value);
            }
            return payload;
          });
      char mark = MARK_CHARS[random.nextInt(MARK_CHARS.length)];
      double markAt = random.nextDouble();
      String markWhat = "string with raw " + codePoint(mark) + " " + where(markAt);
      stored(field, markWhat, inValue(markAt, utf8(mark), mark));
    }

    private void stored(Field field, String what, UnaryOperator<Object> change) {
      scratch(MARKS, field.label() + " " + what, Expect.STORED_EXACTLY, setting(field, change));
    }

    /** Numbers a reader through double would change, in payloads of the scratch queue. */
    void numbers() {
      List<Object> payload = append(op.entry(), "payload");
      List<String> literals = new ArrayList<>(CHANGED_NUMBERS);
      literals.addAll(MORE_CHANGED_NUMBERS);
      for (int i = 0; i < variants; i++) {
        literals.add(randomDecimal());
      }
      for (String literal : literals) {
        String what = "payload {\"n\":" + Json.abbreviate(literal) + "}";
        scratch(
            NUMBERS,
            what,
            Expect.STORED_AS_JSONB,
            draft -> draft.set(payload, base -> Json.obj("n", Json.raw(literal))));
      }
      for (String literal : CHANGED_NUMBERS) {
        scratch(
            NUMBERS,
            "payload " + literal,
            Expect.STORED_AS_JSONB,
            draft -> draft.set(payload, base -> Json.raw(literal)));
        scratch(
            NUMBERS,
            "payload [" + literal + "," + literal + "]",
            Expect.STORED_AS_JSONB,
            draft -> draft.set(payload, base -> Json.listOf(Json.raw(literal), Json.raw(literal))));
      }
      if (!op.batch()) {
        dedupeByExactNumbers(payload);
      }
    }

    /**
     * The same dedupe key with a payload that differs only past a double's precision is other work
     * (422), not a replay of the first.
     */
    private void dedupeByExactNumbers(List<Object> payload) {
      List<String[]> pairs = new ArrayList<>();
      pairs.add(new String[] {"0.3", "0.30000000000000000001"});
      pairs.add(new String[] {"0.30000000000000000001", "0.3"});
      for (int i = 0; i < variants; i++) {
        String near = randomDecimal();
        pairs.add(new String[] {near, near.contains("e") ? near.replace("e", "1e") : near + "1"});
      }
      for (int i = 0; i < pairs.size(); i++) {
        String key = "same-number-" + i;
        String first = pairs.get(i)[0];
        String second = pairs.get(i)[1];
        String what = "dedupeKey " + key + ", payload {\"a\":" + Json.abbreviate(first) + "}";
        scratch(NUMBERS, what, Expect.ACCEPTED, enqueueing(key, payload, first));
        what = "the same dedupeKey, payload {\"a\":" + Json.abbreviate(second) + "}: not a replay";
        Consumer<Draft> again = enqueueing(key, payload, second);
        add(NUMBERS, what, Expect.REFUSED, Set.of(422), Against.SCRATCH, again);
      }
    }

    private Consumer<Draft> enqueueing(String key, List<Object> payload, String number) {
      return draft -> {
        draft.set(List.of("dedupeKey"), base -> key);
        draft.set(payload, base -> Json.obj("a", Json.raw(number)));
      };
    }

    void duplicateKeys(Field field) {
      // Another value first and the base one last: a reader that keeps the last acts on the real
      // token and ids, so a request that slipped through would change the items.
      editBody(
          DUPLICATE_KEYS,
          field,
          "twice, another value first",
          draft -> draft.duplicate(field.path(), base -> otherValue(field, base)));
      editBody(
          DUPLICATE_KEYS,
          field,
          "twice with the same value",
          draft -> draft.duplicate(field.path(), base -> base));
      Set<String> only = new LinkedHashSet<>(field.requiredHere());
      only.add(field.name());
      long siblings = op.fields().stream().filter(f -> f.parent().equals(field.parent())).count();
      if (only.size() < siblings) {
        // Not combinable with other edits: it drops the fields they change.
        refused(
            DUPLICATE_KEYS,
            field.label() + " twice, with only " + String.join(", ", only),
            draft -> {
              draft.keepOnly(field.parent(), only);
              draft.duplicate(field.path(), base -> otherValue(field, base));
            });
      }
    }

    void missingFields() {
      for (Field field : op.fields()) {
        if (field.required()) {
          editBody(MISSING, field, "left out", draft -> draft.remove(field.path()));
        }
      }
      if (op.fields().stream().anyMatch(field -> field.required() && field.path().size() == 1)) {
        refused(MISSING, "{}", draft -> draft.body = new Json.Obj());
      }
      if (op.batch()) {
        refused(MISSING, "the entry {}", draft -> draft.set(op.entry(), base -> new Json.Obj()));
      }
    }

    void wholeBody() {
      // For a claim the body is optional: no body at all is valid.
      boolean optional = !op.bodyRequired();
      rewritten(MALFORMED, "truncated JSON", Json::truncated);
      refused(MALFORMED, "not JSON", draft -> draft.body = ascii("claim it please"));
      refused(MALFORMED, "the body inside an array", draft -> draft.body = Json.listOf(draft.body));
      refused(
          MALFORMED,
          "the body as a JSON string",
          draft -> draft.body = new String(Json.write(draft.body), UTF_8));
      refused(MALFORMED, "the number 42", draft -> draft.body = Json.raw("42"));
      rewritten(MALFORMED, "two documents", body -> concat(body, ascii(" "), body));
      rewritten(MALFORMED, "a trailing comma", body -> concat(Json.truncated(body), ascii(",}")));
      rewritten(MALFORMED, "a comment before the body", body -> concat(ascii("/* hi */"), body));
      // Not "no body": an explicit null, which takes no default, as a field's does not.
      refused(MALFORMED, "null", draft -> draft.body = Json.raw("null"));

      refused(UNKNOWN_FIELD, "an unknown field", draft -> ((Json.Obj) draft.body).add("extra", 1));
      if (op.batch()) {
        refused(
            UNKNOWN_FIELD,
            "an unknown field in the entry",
            draft -> draft.set(append(op.entry(), "extra"), base -> 1));
      }
      Field named = op.fields().get(op.batch() ? 1 : 0);
      String name = named.name();
      String capitalised = Character.toUpperCase(name.charAt(0)) + name.substring(1);
      refused(
          UNKNOWN_FIELD,
          named.label() + " spelled " + capitalised,
          draft -> draft.rename(named.path(), capitalised));
      refused(
          UNKNOWN_FIELD,
          named.label() + " spelled with a trailing space",
          draft -> draft.rename(named.path(), name + " "));
      refused(
          NUL,
          "the name " + named.label() + " with \\u0000",
          draft -> draft.rename(named.path(), Json.splice(name, 1, NUL_ESCAPE, null)));
      refused(
          SURROGATE,
          "the name " + named.label() + " with \\ud800",
          draft -> draft.rename(named.path(), Json.splice(name, 1, ascii("\\ud800"), null)));

      refused(HUGE, "a body over 1 MiB", HostileRequests::padPast1MiB);

      for (byte[] sequence : INVALID_SEQUENCES) {
        String bytes = "bytes " + hex(sequence);
        rewritten(INVALID_UTF8, bytes + " after the opening brace", b -> insert(b, 1, sequence));
        rewritten(INVALID_UTF8, bytes + " after the body", body -> concat(body, sequence));
      }
      rewritten(
          INVALID_UTF8,
          "the body cut inside a character (ends E2 82)",
          body -> concat(Arrays.copyOf(body, body.length - 2), bytes(0xE2, 0x82)));
      for (int i = 0; i < variants; i++) {
        byte[] sequence = pick(MORE_INVALID_SEQUENCES);
        double at = random.nextDouble();
        rewritten(
            INVALID_UTF8,
            "bytes " + hex(sequence) + " at " + percent(at) + " of the body",
            body -> insert(body, (int) (at * body.length), sequence));
      }

      Map<String, Consumer<Draft>> bodies = new LinkedHashMap<>();
      bodies.put("no bytes at all", draft -> draft.body = new byte[0]);
      for (String type : CONTENT_TYPES) {
        String what = type == null ? "no Content-Type" : "Content-Type " + type;
        bodies.put(what, draft -> draft.contentType = type);
      }
      bodies.forEach(
          (what, mutation) -> {
            String hostileClass = what.contains("Content-Type") ? CONTENT_TYPE : EMPTY_BODY;
            if (optional) {
              scratch(hostileClass, what, Expect.WELL_FORMED, mutation);
            } else {
              refused(hostileClass, what, UNSUPPORTED_BODY, mutation);
            }
          });

      refused(EMPTY_BODY, "only whitespace", draft -> draft.body = ascii(" \r\n\t "));

      // Without a Content-Length the body limit must be kept while reading.
      scratch(CHUNKED, "the valid body, chunked", Expect.ACCEPTED, chunked(draft -> {}));
      refused(CHUNKED, "a body over 1 MiB, chunked", chunked(HostileRequests::padPast1MiB));
      refused(CHUNKED, "truncated JSON, chunked", chunked(draft -> draft.lastly = Json::truncated));
      refused(
          CHUNKED,
          "bytes FF inside, chunked",
          chunked(draft -> draft.lastly = body -> insert(body, 1, bytes(0xFF))));
      Field text = op.fields().stream().filter(f -> f.kind().equals("string")).findFirst().get();
      refused(
          CHUNKED,
          text.label() + " of 300 KB, chunked",
          chunked(setting(text, base -> pad(base, HUGE_STRING, "x"))));
    }

    /** An operation that takes no body gets one anyway; it need only answer well. */
    void strayBody() {
      scratch(STRAY_BODY, "a JSON body", Expect.WELL_FORMED, draft -> draft.json(Json.obj("a", 1)));
      scratch(
          STRAY_BODY,
          "bytes FF FE as text/plain",
          Expect.WELL_FORMED,
          draft -> {
            draft.body = bytes(0xFF, 0xFE);
            draft.contentType = "text/plain";
          });
      scratch(
          STRAY_BODY,
          "a body over 1 MiB",
          Expect.WELL_FORMED,
          draft -> draft.json(Json.obj("padding", "x".repeat(OVER_THE_BODY_LIMIT))));
      scratch(
          STRAY_BODY,
          "a chunked JSON body",
          Expect.WELL_FORMED,
          chunked(draft -> draft.json(Json.obj("a", 1))));
    }

    void pathParameter(String parameter) {
      List<String[]> values = new ArrayList<>(); // {class, what, value as sent}; {} = real value
      values.add(new String[] {NUL, "%00", "%00"});
      values.add(new String[] {NUL, "real value + %00", "{}%00"});
      values.add(new String[] {NUL, "%00 + real value", "%00{}"});
      values.add(new String[] {SURROGATE, "%ED%A0%80 (UTF-8 of a surrogate)", "%ED%A0%80"});
      values.add(new String[] {SURROGATE, "real value + %ED%BF%BF", "{}%ED%BF%BF"});
      values.add(new String[] {INVALID_UTF8, "%FF", "%FF"});
      values.add(new String[] {INVALID_UTF8, "real value + %C0%80", "{}%C0%80"});
      values.add(new String[] {INVALID_UTF8, "real value + %E2%82", "{}%E2%82"});
      values.add(new String[] {MARKS, "%E2%80%AE (U+202E) + real value", "%E2%80%AE{}"});
      values.add(new String[] {MARKS, "real value + %E2%80%8B (U+200B)", "{}%E2%80%8B"});
      values.add(new String[] {MARKS, "%EF%BB%BF (U+FEFF) + real value", "%EF%BB%BF{}"});
      values.add(new String[] {PATH, "..%2F", "..%2F"});
      values.add(new String[] {PATH, "../", "../"});
      values.add(new String[] {PATH, "..", ".."});
      values.add(new String[] {PATH, "%2E%2E", "%2E%2E"});
      values.add(new String[] {PATH, "real value + %2F..", "{}%2F.."});
      values.add(new String[] {PATH, "%F0%9F%92%A9", "%F0%9F%92%A9"});
      values.add(new String[] {PATH, "real value + %F0%9F%92%A9", "{}%F0%9F%92%A9"});
      values.add(new String[] {PATH, "real value + %20", "{}%20"});
      if (parameter.equals("id")) {
        values.add(new String[] {PATH, "9223372036854775808 (2^63)", "9223372036854775808"});
        values.add(new String[] {PATH, "-1", "-1"});
        values.add(new String[] {PATH, "0", "0"});
        values.add(new String[] {PATH, "-0", "-0"});
        values.add(new String[] {PATH, "1e3", "1e3"});
        values.add(new String[] {PATH, "20 nines", "9".repeat(20)});
        values.add(new String[] {PATH, "0 + real value", "0{}"});
        values.add(new String[] {PATH, "%2B + real value", "%2B{}"});
        values.add(new String[] {PATH, "real value + .0", "{}.0"});
        values.add(new String[] {HUGE, "5,000 characters", "1".repeat(5_000)});
      } else {
        values.add(new String[] {PATH, "real value in upper case", "{upper}"});
        values.add(new String[] {PATH, "Emails", "Emails"});
        values.add(new String[] {PATH, "- + real value", "-{}"});
        values.add(new String[] {PATH, ". + real value", ".{}"});
        values.add(new String[] {HUGE, "65 characters", "q".repeat(65)});
        values.add(new String[] {HUGE, "5,000 characters", "q".repeat(5_000)});
      }
      for (int i = 0; i < variants; i++) {
        String junk = randomPercentJunk();
        values.add(new String[] {PATH, "real value + " + junk, "{}" + junk});
        values.add(new String[] {PATH, junk + " + real value", junk + "{}"});
        int length = 65 + random.nextInt(4_000);
        values.add(new String[] {HUGE, length + " characters", "7".repeat(length)});
      }
      for (String[] value : values) {
        refused(
            value[0],
            "path " + parameter + " = " + value[1],
            BAD_PARAMETER,
            draft -> draft.path.put(parameter, Draft.derived(value[2], draft.path.get(parameter))));
      }
      // Left empty, the last segment goes: /v1/items/ names the list of items, a valid request.
      boolean namesAnother = op.path().endsWith("{" + parameter + "}");
      Expect expect = namesAnother ? Expect.WELL_FORMED : Expect.REFUSED;
      String empty = "path " + parameter + " = empty";
      add(PATH, empty, expect, BAD_PARAMETER, Against.SNAPSHOT, d -> d.path.put(parameter, ""));
    }

    void queryParameter(String parameter) {
      List<String[]> values = new ArrayList<>(); // {class, what, value as sent}; {} = real value
      values.add(new String[] {NUL, "%00", "%00"});
      values.add(new String[] {NUL, "real value + %00", "{}%00"});
      values.add(new String[] {SURROGATE, "%ED%A0%80 (UTF-8 of a surrogate)", "%ED%A0%80"});
      values.add(new String[] {INVALID_UTF8, "%FF", "%FF"});
      values.add(new String[] {INVALID_UTF8, "real value + %E2%82", "{}%E2%82"});
      values.add(new String[] {MARKS, "%E2%80%AE (U+202E) + real value", "%E2%80%AE{}"});
      values.add(new String[] {MARKS, "real value + %E2%80%8B (U+200B)", "{}%E2%80%8B"});
      values.add(new String[] {HUGE, "5,000 characters", "a".repeat(5_000)});
      switch (parameter) {
        case "limit" -> {
          for (String limit : BAD_LIMITS) {
            values.add(new String[] {QUERY, limit, limit});
          }
        }
        case "cursor" -> {
          values.add(new String[] {QUERY, "!!!", "!!!"});
          values.add(new String[] {QUERY, "base64 of before:-1", base64("before:-1")});
          values.add(new String[] {QUERY, "base64 of before:0", base64("before:0")});
          values.add(new String[] {QUERY, "base64 of hello", base64("hello")});
          values.add(new String[] {QUERY, "real value + %3D", "{}%3D"});
        }
        case "state" -> {
          values.add(new String[] {QUERY, "PENDING", "PENDING"});
          values.add(new String[] {QUERY, "pending,failed", "pending,failed"});
          values.add(new String[] {QUERY, "pending + %20", "pending%20"});
        }
        case "queue" -> {
          values.add(new String[] {QUERY, "real value in upper case", "{upper}"});
          values.add(new String[] {HUGE, "65 characters", "q".repeat(65)});
          values.add(new String[] {QUERY, "- + real value", "-{}"});
        }
        case "force" -> {
          values.add(new String[] {QUERY, "TRUE", "TRUE"});
          values.add(new String[] {QUERY, "1", "1"});
          values.add(new String[] {QUERY, "yes", "yes"});
          values.add(new String[] {QUERY, "true + %20", "true%20"});
        }
        case "updatedAfter", "updatedBefore" -> {
          values.add(new String[] {QUERY, "yesterday", "yesterday"});
          values.add(new String[] {QUERY, "no offset", "2026-01-01T00:00:00"});
          values.add(new String[] {QUERY, "nanoseconds", "2026-01-01T00:00:00.123456789Z"});
          values.add(new String[] {QUERY, "year 10000", "%2B10000-01-01T00:00:00Z"});
          // Not RFC 3339, though java.time's ISO reader takes them: no seconds, an offset of
          // hours alone or with seconds.
          values.add(new String[] {QUERY, "no seconds", "2026-01-01T00:00Z"});
          values.add(new String[] {QUERY, "offset in hours", "2026-01-01T00:00:00%2B01"});
          values.add(new String[] {QUERY, "offset with seconds", "2026-01-01T00:00:00%2B01:00:30"});
        }
        case "reason", "q" -> values.add(new String[] {HUGE, "501 characters", "r".repeat(501)});
        default -> throw new IllegalStateException("say what is hostile for ?" + parameter);
      }
      // Free text (a reason to look for, a key to search): marks and stray characters are text a
      // person may well look for, so only a well-formed answer is asked of them, never a 5xx.
      boolean text = parameter.equals("reason") || parameter.equals("q");
      List<String[]> texts = new ArrayList<>();
      for (int i = 0; i < variants; i++) {
        String junk = randomPercentJunk();
        (text ? texts : values).add(new String[] {QUERY, "real value + " + junk, "{}" + junk});
      }
      if (text) {
        values.removeIf(value -> value[0].equals(MARKS));
        texts.add(new String[] {MARKS, "%E2%80%AE (U+202E) + real value", "%E2%80%AE{}"});
      }
      for (String[] value : values) {
        refused(
            value[0],
            "query " + parameter + " = " + value[1],
            BAD_QUERY,
            draft -> draft.setQuery(parameter, value[2]));
      }
      for (String[] value : texts) {
        add(
            value[0],
            "query " + parameter + " = " + value[1],
            Expect.WELL_FORMED,
            BAD_QUERY,
            Against.SNAPSHOT,
            draft -> draft.setQuery(parameter, value[2]));
      }
      // An empty value says nothing: taken as "no filter" it would be a filter silently dropped.
      refused(
          QUERY,
          "query " + parameter + " = empty",
          BAD_QUERY,
          draft -> draft.setQuery(parameter, ""));
      // A parameter given twice is ambiguous: which one did the client mean?
      String[] twice =
          switch (parameter) {
            case "state" -> new String[] {"failed", "done"};
            case "limit" -> new String[] {"1", "2"};
            default -> new String[] {"{}", "{}x"};
          };
      String pair = parameter + "=" + twice[0] + "&" + parameter + "=" + twice[1];
      String what = "query " + pair.replace("{}", "(real value)");
      refused(
          REPEATED_QUERY,
          what,
          Set.of(400),
          draft -> draft.repeatQuery(parameter, twice[0], twice[1]));
    }

    /** Not one W3C traceparent: refused by name, never dropped (the agent asked for its trace). */
    void traceparent() {
      String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
      String parent = "00f067aa0ba902b7";
      for (String value :
          List.of(
              "",
              "00",
              "00-" + trace.toUpperCase() + "-" + parent + "-01",
              "00-" + "0".repeat(32) + "-" + parent + "-01",
              "00-" + trace + "-" + "0".repeat(16) + "-01",
              "ff-" + trace + "-" + parent + "-01",
              "00-" + trace + "-" + parent + "-01-extra",
              "00_" + trace + "_" + parent + "_01")) {
        refused(
            HEADER,
            "traceparent: " + Json.show(value),
            Set.of(400),
            d -> d.headers.put("traceparent", value));
      }
      refused(
          HUGE,
          "traceparent: 5,000 characters",
          Set.of(400),
          d -> d.headers.put("traceparent", "a".repeat(5_000)));
    }

    void headerParameter(String header) {
      if (header.equals("traceparent")) {
        traceparent();
        return;
      }
      if (!header.equals("If-Match") && !header.equals("If-None-Match")) {
        throw new IllegalStateException("say what is hostile for the header " + header);
      }
      // Not a list of entity tags: refused by name, never guessed at (a guess could overwrite).
      List<String> malformed =
          new ArrayList<>(
              List.of(
                  "",
                  "1",
                  "\"1",
                  "\"1\" \"2\"",
                  "\"1\";",
                  "*, \"1\"",
                  "**",
                  ",",
                  "W/1",
                  "w/\"1\"",
                  "\"a\"b\"",
                  "\"1\" , x"));
      for (String value : malformed) {
        refused(
            HEADER,
            header + ": " + Json.show(value),
            Set.of(400),
            d -> d.headers.put(header, value));
      }
      refused(
          HUGE,
          header + ": 5,000 characters",
          Set.of(400),
          d -> d.headers.put(header, "a".repeat(5_000)));
      if (header.equals("If-None-Match")) {
        return; // documented on reads only, where a tag of no version reads as if none was sent
      }
      // Entity tags, but of no version the policy is at: the change is not made (a 412), or the
      // queue is already as asked (a resume of a running queue: 200), but nothing changes.
      List<String> noVersion =
          List.of(
              "\"999999\"",
              "W/\"0\"",
              "\"-1\"",
              "\"01\"",
              "\"99999999999999999999\"",
              "\"\"",
              "\"\u00e9\"",
              "\"0x1\", , \"1e3\"",
              "\"" + "9".repeat(4_000) + "\"");
      for (String value : noVersion) {
        atSnapshot(
            HEADER,
            header + ": " + Json.show(value.length() > 40 ? value.substring(0, 40) + "…" : value),
            d -> d.headers.put(header, value));
      }
    }

    // ---- how they are added -----------------------------------------------------------------

    /** A change of one field that makes the body invalid: refused, combinable with others. */
    private void edit(String hostileClass, Field field, String what, UnaryOperator<Object> change) {
      editBody(hostileClass, field, what, setting(field, change));
    }

    private void editBody(String hostileClass, Field field, String what, Consumer<Draft> mutation) {
      // A claim token the service reads but cannot match is no current claim: 409 is an answer.
      boolean unmatched = field.name().equals("claimToken") && !hostileClass.equals(INVALID_UTF8);
      Set<Integer> refusals =
          unmatched && isCharacterClass(hostileClass) ? INVALID_TOKEN : INVALID_BODY;
      hostiles.add(
          new Hostile(
              hostileClass,
              op,
              field.label() + " " + what,
              Expect.REFUSED,
              refusals,
              Against.SNAPSHOT,
              field,
              mutation));
    }

    private void refused(String hostileClass, String what, Consumer<Draft> mutation) {
      refused(hostileClass, what, INVALID_BODY, mutation);
    }

    private void refused(
        String hostileClass, String what, Set<Integer> refusals, Consumer<Draft> mutation) {
      add(hostileClass, what, Expect.REFUSED, refusals, Against.SNAPSHOT, mutation);
    }

    /** A request that may be valid but must not act: it aims at the snapshot items. */
    private void atSnapshot(String hostileClass, String what, Consumer<Draft> mutation) {
      add(hostileClass, what, Expect.WELL_FORMED, Set.of(), Against.SNAPSHOT, mutation);
    }

    /** A change of the bytes as written, for what JSON cannot say. */
    private void rewritten(String hostileClass, String what, UnaryOperator<byte[]> change) {
      refused(hostileClass, what, draft -> draft.lastly = change);
    }

    /** A request that may be valid: it goes to scratch items. */
    private void scratch(
        String hostileClass, String what, Expect expect, Consumer<Draft> mutation) {
      add(hostileClass, what, expect, Set.of(400), Against.SCRATCH, mutation);
    }

    private void add(
        String hostileClass,
        String what,
        Expect expect,
        Set<Integer> refusals,
        Against against,
        Consumer<Draft> mutation) {
      hostiles.add(new Hostile(hostileClass, op, what, expect, refusals, against, null, mutation));
    }
  }

  /** PUT, DELETE, PATCH, OPTIONS, HEAD and the missing one of GET and POST, on every path. */
  private void methods() {
    Map<String, List<Operation>> byPath = new LinkedHashMap<>();
    for (Operation op : operations) {
      byPath.computeIfAbsent(op.path(), path -> new ArrayList<>()).add(op);
    }
    for (List<Operation> ops : byPath.values()) {
      // What a misrouted method would act on: the POST, with its body, if there is one.
      Operation op =
          ops.stream().filter(o -> o.method().equals("post")).findFirst().orElse(ops.get(0));
      Set<String> defined = new LinkedHashSet<>();
      ops.forEach(o -> defined.add(o.method().toUpperCase(Locale.ROOT)));
      Mutations mutations = new Mutations(op);
      for (String method : List.of("PUT", "DELETE", "PATCH", "GET", "POST")) {
        if (!defined.contains(method)) {
          String what = method + " " + op.path();
          mutations.refused(METHOD, what, BAD_METHOD, draft -> draft.method = method);
        }
      }
      // Valid or not, they must not act: they aim at the snapshot too.
      mutations.atSnapshot(METHOD, "OPTIONS " + op.path(), draft -> draft.method = "OPTIONS");
      mutations.atSnapshot(
          METHOD,
          "HEAD " + op.path(),
          draft -> {
            draft.method = "HEAD";
            draft.body = null;
            draft.contentType = null;
          });
    }
  }

  /** Random combinations of two or three refused edits of different fields of one operation. */
  private void combine() {
    Map<Operation, List<Hostile>> edits = new LinkedHashMap<>();
    for (Hostile hostile : hostiles) {
      if (hostile.combinable()) {
        edits.computeIfAbsent(hostile.operation(), op -> new ArrayList<>()).add(hostile);
      }
    }
    List<Operation> ops = new ArrayList<>(edits.keySet());
    for (int i = 0; i < combinations; i++) {
      Operation op = ops.get(random.nextInt(ops.size()));
      List<Hostile> pool = edits.get(op);
      int count = 2 + random.nextInt(2);
      Map<Field, Hostile> chosen = new LinkedHashMap<>();
      for (int tries = 0; chosen.size() < count && tries < 20; tries++) {
        Hostile edit = pool.get(random.nextInt(pool.size()));
        chosen.putIfAbsent(edit.field(), edit);
      }
      Set<Integer> refusals = new LinkedHashSet<>();
      chosen.values().forEach(edit -> refusals.addAll(edit.refusals()));
      String what = String.join(" + ", chosen.values().stream().map(Hostile::what).toList());
      Consumer<Draft> all = draft -> chosen.values().forEach(edit -> edit.mutation().accept(draft));
      new Mutations(op).refused(COMBINED, what, refusals, all);
    }
  }

  // ---- helpers ---------------------------------------------------------------------------

  private static UnaryOperator<Object> spliced(double at, String escapes) {
    return spliced(at, ascii(escapes));
  }

  private static UnaryOperator<Object> spliced(double at, byte[] inserted) {
    return base -> Json.splice(text(base), at, inserted, null);
  }

  private static UnaryOperator<Object> spliced(double at, byte[] inserted, char meant) {
    return base -> Json.splice(text(base), at, inserted, String.valueOf(meant));
  }

  /**
   * The base value of a string field: never an earlier edit's result (combine keeps them apart).
   */
  private static String text(Object base) {
    if (base == null) {
      return ""; // a field the base leaves null
    }
    if (!(base instanceof String text)) {
      throw new IllegalStateException("not a string to splice into: " + base);
    }
    return text;
  }

  private static String pad(Object base, int length, String filler) {
    StringBuilder padded = new StringBuilder(text(base));
    while (padded.length() < length) {
      padded.append(filler);
    }
    return padded.toString();
  }

  private static Object repeat(Object entries, int count) {
    List<Object> repeated = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      repeated.add(((List<?>) entries).get(0));
    }
    return repeated;
  }

  private static Consumer<Draft> setting(Field field, UnaryOperator<Object> change) {
    return draft -> draft.set(field.path(), change);
  }

  private static Consumer<Draft> chunked(Consumer<Draft> mutation) {
    return mutation.andThen(draft -> draft.chunked = true);
  }

  /** A payload whose string value has these bytes put in. */
  private static UnaryOperator<Object> inValue(double at, byte[] inserted) {
    return base -> Json.obj("to", Json.splice(TO, at, inserted, null));
  }

  private static UnaryOperator<Object> inValue(double at, byte[] inserted, char meant) {
    return base -> Json.obj("to", Json.splice(TO, at, inserted, String.valueOf(meant)));
  }

  /** A payload whose key has these bytes put in. */
  private static UnaryOperator<Object> inKey(double at, byte[] inserted) {
    return base -> Json.obj(Json.splice("to", at, inserted, null), TO);
  }

  private static UnaryOperator<Object> inKey(double at, byte[] inserted, char meant) {
    return base -> Json.obj(Json.splice("to", at, inserted, String.valueOf(meant)), TO);
  }

  /** Classes of characters a reader may take in and then fail to match, rather than refuse. */
  private static boolean isCharacterClass(String hostileClass) {
    return hostileClass.equals(NUL) || hostileClass.equals(SURROGATE);
  }

  private static void padPast1MiB(Draft draft) {
    ((Json.Obj) draft.body).add("padding", "x".repeat(OVER_THE_BODY_LIMIT));
  }

  /** A valid value other than the base one, for the first of two duplicate members. */
  private static Object otherValue(Field field, Object base) {
    if (field.isTime()) {
      return "2025-06-01T00:00:00Z";
    }
    return switch (field.kind()) {
      case "string" -> field.name().equals("claimToken") ? "not-the-claim-token" : base + "-other";
      case "integer" -> {
        long min = field.spec().path("minimum").asLong(0);
        yield base instanceof Number number && number.longValue() == min ? min + 1 : min;
      }
      case "boolean" -> !Boolean.TRUE.equals(base);
      case "array" -> new ArrayList<>();
      default -> Json.obj("other", true);
    };
  }

  /** A decimal with more digits than a double holds, or an exponent past its range. */
  private String randomDecimal() {
    StringBuilder digits = new StringBuilder();
    int length = 18 + random.nextInt(30);
    for (int i = 0; i < length; i++) {
      digits.append((char) ('0' + (i == 0 ? 1 + random.nextInt(9) : random.nextInt(10))));
    }
    return switch (random.nextInt(4)) {
      case 0 -> "0." + digits;
      case 1 -> digits.substring(0, 3) + "." + digits.substring(3) + "0".repeat(random.nextInt(4));
      case 2 -> "1e" + (random.nextBoolean() ? "" : "-") + (300 + random.nextInt(200));
      default -> (random.nextBoolean() ? "-" : "") + digits;
    };
  }

  /** Percent-encoded bytes that no queue name or item id holds: controls and non-ASCII. */
  private String randomPercentJunk() {
    StringBuilder junk = new StringBuilder();
    int count = 1 + random.nextInt(4);
    for (int i = 0; i < count; i++) {
      int b = random.nextInt(3) == 0 ? random.nextInt(0x20) : 0x80 + random.nextInt(0x80);
      junk.append(String.format("%%%02X", b));
    }
    return junk.toString();
  }

  private <T> T pick(List<T> choices) {
    return choices.get(random.nextInt(choices.size()));
  }

  private Operation operation(String path, String method, JsonNode spec) {
    List<String> inPath = new ArrayList<>();
    Map<String, JsonNode> inQuery = new LinkedHashMap<>();
    List<String> inHeader = new ArrayList<>();
    for (JsonNode declared : spec.path("parameters")) {
      JsonNode parameter = resolveParameter(declared);
      String name = parameter.path("name").asText();
      switch (parameter.path("in").asText()) {
        case "path" -> inPath.add(name);
        case "query" -> inQuery.put(name, parameter);
        case "header" -> inHeader.add(name); // optional: the base request leaves it out
        default -> throw new IllegalStateException("a parameter in " + parameter.path("in"));
      }
    }
    JsonNode schema =
        spec.path("requestBody").path("content").path("application/json").path("schema");
    JsonNode body = schema.isMissingNode() ? null : resolve(schema);
    boolean required = spec.path("requestBody").path("required").asBoolean(false);
    List<Field> fields = body == null ? List.of() : fields(body, List.of());
    return new Operation(method, path, inPath, inQuery, inHeader, body, required, fields);
  }

  /** A parameter, or the shared one (#/components/parameters/...) that it refers to. */
  private JsonNode resolveParameter(JsonNode parameter) {
    String ref = parameter.path("$ref").asText("");
    return ref.isEmpty()
        ? parameter
        : document
            .path("components")
            .path("parameters")
            .path(ref.substring(ref.lastIndexOf('/') + 1));
  }

  /** The fields of a body schema, and those of the entries of its arrays of objects. */
  private List<Field> fields(JsonNode schema, List<Object> at) {
    Set<String> required = new LinkedHashSet<>();
    schema.path("required").forEach(name -> required.add(name.asText()));
    List<Field> fields = new ArrayList<>();
    for (Map.Entry<String, JsonNode> property : schema.path("properties").properties()) {
      JsonNode spec = resolve(property.getValue());
      List<Object> path = append(at, property.getKey());
      fields.add(new Field(path, property.getKey(), spec, required));
      JsonNode items = resolve(spec.path("items"));
      if (typeOf(spec).equals("array") && items.has("properties")) {
        fields.addAll(fields(items, append(path, 0)));
      }
      if (typeOf(spec).equals("object") && spec.has("properties")) {
        fields.addAll(fields(spec, path)); // e.g. complete's next: its own fields, one by one
      }
    }
    return fields;
  }

  /** A schema with its $ref followed; what sits next to the $ref (examples, bounds) is kept. */
  private JsonNode resolve(JsonNode schema) {
    String ref = schema.path("$ref").asText("");
    if (!ref.startsWith("#/components/schemas/")) {
      return schema;
    }
    String name = ref.substring("#/components/schemas/".length());
    ObjectNode resolved =
        resolve(document.path("components").path("schemas").path(name)).deepCopy();
    schema.properties().forEach(property -> resolved.set(property.getKey(), property.getValue()));
    resolved.remove("$ref");
    return resolved;
  }

  /** A schema's type other than null ({@code type: [string, "null"]} is a string); "" if none. */
  static String typeOf(JsonNode spec) {
    JsonNode type = spec.path("type");
    if (type.isArray()) {
      for (JsonNode member : type) {
        if (!member.asText().equals("null")) {
          return member.asText();
        }
      }
      return "";
    }
    return type.asText("");
  }

  static List<Object> append(List<Object> path, Object step) {
    List<Object> longer = new ArrayList<>(path);
    longer.add(step);
    return List.copyOf(longer);
  }

  private static String where(double at) {
    if (at == 0 || at == 0.5 || at == 1) {
      return at == 0 ? "at the start" : at == 1 ? "at the end" : "in the middle";
    }
    return "at " + percent(at);
  }

  private static String percent(double at) {
    return Math.round(at * 100) + "%";
  }

  private static String codePoint(char c) {
    return String.format("U+%04X", (int) c);
  }

  private static String escape(char c) {
    return String.format("\\u%04x", (int) c);
  }

  private static String base64(String text) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(text.getBytes(UTF_8));
  }

  static String hex(byte[] bytes) {
    return HexFormat.ofDelimiter(" ").withUpperCase().formatHex(bytes);
  }

  static byte[] bytes(int... values) {
    byte[] bytes = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      bytes[i] = (byte) values[i];
    }
    return bytes;
  }

  static byte[] ascii(String text) {
    return text.getBytes(US_ASCII);
  }

  static byte[] utf8(char c) {
    return String.valueOf(c).getBytes(UTF_8);
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }

  static byte[] insert(byte[] body, int at, byte[] inserted) {
    return concat(
        Arrays.copyOfRange(body, 0, at), inserted, Arrays.copyOfRange(body, at, body.length));
  }

  /** A request being built: an operation's base request, then changed by a mutation. */
  static final class Draft {
    String method;
    final String pathTemplate;
    final Map<String, String> path = new LinkedHashMap<>(); // values as sent, percent-encoded
    final List<String[]> query = new ArrayList<>(); // name and value as sent
    final Map<String, String> headers = new LinkedHashMap<>(); // beside Authorization
    Object body; // a value for Json.write, or the bytes to send; null: no body
    String contentType;
    UnaryOperator<byte[]> lastly = bytes -> bytes; // a last change to the bytes as written
    boolean chunked;

    Draft(String method, String pathTemplate) {
      this.method = method;
      this.pathTemplate = pathTemplate;
    }

    /** A value derived from the real one: {} stands for it, {upper} for it in upper case. */
    static String derived(String pattern, String real) {
      return pattern.equals("{upper}")
          ? real.toUpperCase(Locale.ROOT)
          : pattern.replace("{}", real);
    }

    void json(Object value) {
      body = value;
      contentType = "application/json";
    }

    void set(List<Object> at, UnaryOperator<Object> change) {
      if (at.isEmpty()) {
        body = change.apply(body);
      } else {
        Json.set(body, at, change);
      }
    }

    void remove(List<Object> at) {
      Json.remove(body, at);
    }

    void duplicate(List<Object> at, UnaryOperator<Object> firstValue) {
      Json.duplicate(body, at, firstValue);
    }

    void rename(List<Object> at, Object name) {
      Json.rename(body, at, name);
    }

    void keepOnly(List<Object> at, Set<String> names) {
      if ((at.isEmpty() ? body : Json.get(body, at)) instanceof Json.Obj obj) {
        obj.members.removeIf(member -> !names.contains(member.name));
      }
    }

    void setQuery(String name, String pattern) {
      for (String[] pair : query) {
        if (pair[0].equals(name)) {
          pair[1] = derived(pattern, pair[1]);
        }
      }
    }

    void repeatQuery(String name, String first, String second) {
      String real = query.stream().filter(pair -> pair[0].equals(name)).findFirst().get()[1];
      query.removeIf(pair -> pair[0].equals(name));
      query.add(new String[] {name, derived(first, real)});
      query.add(new String[] {name, derived(second, real)});
    }

    Request build() {
      String target = pathTemplate;
      for (Map.Entry<String, String> parameter : path.entrySet()) {
        target = target.replace("{" + parameter.getKey() + "}", parameter.getValue());
      }
      StringBuilder queryString = new StringBuilder();
      for (String[] pair : query) {
        queryString.append(queryString.length() == 0 ? "?" : "&");
        queryString.append(pair[0]).append('=').append(pair[1]);
      }
      byte[] bytes = body instanceof byte[] raw ? raw : body == null ? null : Json.write(body);
      return new Request(
          method,
          target + queryString,
          contentType,
          bytes == null ? null : lastly.apply(bytes),
          chunked,
          Map.copyOf(headers));
    }
  }

  /**
   * JSON as hostile clients write it: objects keep their members in order and may repeat a name,
   * and {@link Raw} text goes out exactly as given (escapes, numbers, bytes that are not UTF-8).
   */
  static final class Json {
    private Json() {}

    /** JSON text written as given; meaning is what a correct reader makes of it (null: none). */
    record Raw(byte[] bytes, Object meaning) {}

    static final class Member {
      Object name; // a String, or a Raw
      Object value;

      Member(Object name, Object value) {
        this.name = name;
        this.value = value;
      }
    }

    static final class Obj {
      final List<Member> members = new ArrayList<>();

      /** Sets every member of this name, or adds one. */
      Obj put(Object name, Object value) {
        boolean found = false;
        for (Member member : members) {
          if (member.name.equals(name)) {
            member.value = value;
            found = true;
          }
        }
        return found ? this : add(name, value);
      }

      /** Adds a member, even if there is one of this name. */
      Obj add(Object name, Object value) {
        members.add(new Member(name, value));
        return this;
      }
    }

    static Obj obj(Object name, Object value) {
      return new Obj().add(name, value);
    }

    static List<Object> listOf(Object... values) {
      return new ArrayList<>(Arrays.asList(values));
    }

    static Raw raw(String text) {
      return new Raw(ascii(text), null);
    }

    static byte[] truncated(byte[] body) {
      return Arrays.copyOf(body, body.length - 1);
    }

    /** A JSON string: the base text with bytes put in at a fraction of its length. */
    static Raw splice(String base, double at, byte[] inserted, String meaning) {
      int cut = (int) Math.round(at * base.length());
      String before = base.substring(0, cut);
      String after = base.substring(cut);
      byte[] text = concat(ascii("\""), escaped(before), inserted, escaped(after), ascii("\""));
      return new Raw(text, meaning == null ? null : before + meaning + after);
    }

    static Raw deepArrays(int depth) {
      return new Raw(ascii("[".repeat(depth) + "]".repeat(depth)), null);
    }

    static Raw deepObjects(int depth) {
      return new Raw(ascii("{\"a\":".repeat(depth) + "1" + "}".repeat(depth)), null);
    }

    /** A Jackson value in this model. */
    static Object from(JsonNode node) {
      if (node.isObject()) {
        Obj obj = new Obj();
        node.properties()
            .forEach(property -> obj.add(property.getKey(), from(property.getValue())));
        return obj;
      }
      if (node.isArray()) {
        List<Object> list = new ArrayList<>();
        node.forEach(element -> list.add(from(element)));
        return list;
      }
      if (node.isTextual()) {
        return node.asText();
      }
      if (node.isMissingNode()) {
        throw new IllegalStateException("no example to start from");
      }
      return new Raw(ascii(node.toString()), node);
    }

    /** What a correct reader makes of a value: what a valid request must store. */
    static JsonNode meaning(Object value) {
      JsonNodeFactory nodes = JsonNodeFactory.instance;
      if (value == null) {
        return nodes.nullNode();
      } else if (value instanceof JsonNode node) {
        return node;
      } else if (value instanceof String text) {
        return nodes.textNode(text);
      } else if (value instanceof Raw raw && raw.meaning() != null) {
        return meaning(raw.meaning());
      } else if (value instanceof Obj obj) {
        ObjectNode node = nodes.objectNode();
        obj.members.forEach(
            member -> node.set(meaning(member.name).asText(), meaning(member.value)));
        return node;
      } else if (value instanceof List<?> list) {
        ArrayNode node = nodes.arrayNode();
        list.forEach(element -> node.add(meaning(element)));
        return node;
      } else if (value instanceof Boolean bool) {
        return nodes.booleanNode(bool);
      } else if (value instanceof Long || value instanceof Integer) {
        return nodes.numberNode(((Number) value).longValue());
      }
      throw new IllegalStateException("no meaning for " + value);
    }

    static byte[] write(Object value) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      write(value, out);
      return out.toByteArray();
    }

    private static void write(Object value, ByteArrayOutputStream out) {
      if (value == null) {
        out.writeBytes(ascii("null"));
      } else if (value instanceof byte[] bytes) {
        out.writeBytes(bytes);
      } else if (value instanceof Raw raw) {
        out.writeBytes(raw.bytes());
      } else if (value instanceof String text) {
        out.writeBytes(concat(ascii("\""), escaped(text), ascii("\"")));
      } else if (value instanceof Number || value instanceof Boolean) {
        out.writeBytes(ascii(value.toString()));
      } else if (value instanceof Obj obj) {
        out.write('{');
        for (int i = 0; i < obj.members.size(); i++) {
          out.writeBytes(ascii(i > 0 ? "," : ""));
          write(obj.members.get(i).name, out);
          out.write(':');
          write(obj.members.get(i).value, out);
        }
        out.write('}');
      } else if (value instanceof List<?> list) {
        out.write('[');
        for (int i = 0; i < list.size(); i++) {
          out.writeBytes(ascii(i > 0 ? "," : ""));
          write(list.get(i), out);
        }
        out.write(']');
      } else {
        throw new IllegalArgumentException("cannot write " + value.getClass());
      }
    }

    /** The text as UTF-8 inside a JSON string. A lone surrogate has no UTF-8: use a Raw escape. */
    private static byte[] escaped(String text) {
      StringBuilder escaped = new StringBuilder(text.length() + 8);
      for (int i = 0; i < text.length(); i++) {
        char c = text.charAt(i);
        boolean pair =
            Character.isHighSurrogate(c)
                && i + 1 < text.length()
                && Character.isLowSurrogate(text.charAt(i + 1));
        if (c == '"' || c == '\\') {
          escaped.append('\\').append(c);
        } else if (c < 0x20) {
          escaped.append(String.format("\\u%04x", (int) c));
        } else if (pair) {
          escaped.append(c).append(text.charAt(++i));
        } else if (Character.isSurrogate(c)) {
          // String.getBytes would quietly write '?', the very rewrite this test looks for.
          throw new IllegalArgumentException("a lone surrogate must be sent as a Raw escape");
        } else {
          escaped.append(c);
        }
      }
      return escaped.toString().getBytes(UTF_8);
    }

    static Object get(Object root, List<Object> at) {
      Object here = root;
      for (Object step : at) {
        here = child(here, step);
      }
      return here;
    }

    private static Object child(Object container, Object step) {
      if (container instanceof Obj obj) {
        for (Member member : obj.members) {
          if (member.name.equals(step)) {
            return member.value;
          }
        }
      } else if (container instanceof List<?> list
          && step instanceof Integer i
          && i < list.size()) {
        return list.get(i);
      }
      return null;
    }

    /** Changes the value at a path; a path that another edit took away is left alone. */
    @SuppressWarnings("unchecked")
    static void set(Object root, List<Object> at, UnaryOperator<Object> change) {
      Object parent = get(root, at.subList(0, at.size() - 1));
      Object last = at.get(at.size() - 1);
      if (parent instanceof Obj obj) {
        List<Member> named = obj.members.stream().filter(m -> m.name.equals(last)).toList();
        named.forEach(member -> member.value = change.apply(member.value));
        if (named.isEmpty()) {
          obj.add(last, change.apply(null));
        }
      } else if (parent instanceof List<?> list && last instanceof Integer i && i < list.size()) {
        ((List<Object>) list).set(i, change.apply(list.get(i)));
      }
    }

    static void remove(Object root, List<Object> at) {
      if (get(root, at.subList(0, at.size() - 1)) instanceof Obj obj) {
        obj.members.removeIf(member -> member.name.equals(at.get(at.size() - 1)));
      }
    }

    /** Puts another member of the same name before the first one, if the body has it. */
    static void duplicate(Object root, List<Object> at, UnaryOperator<Object> firstValue) {
      if (get(root, at.subList(0, at.size() - 1)) instanceof Obj obj) {
        Object name = at.get(at.size() - 1);
        for (int i = 0; i < obj.members.size(); i++) {
          if (obj.members.get(i).name.equals(name)) {
            obj.members.add(i, new Member(name, firstValue.apply(obj.members.get(i).value)));
            return;
          }
        }
      }
    }

    static void rename(Object root, List<Object> at, Object name) {
      if (get(root, at.subList(0, at.size() - 1)) instanceof Obj obj) {
        obj.members.stream()
            .filter(member -> member.name.equals(at.get(at.size() - 1)))
            .forEach(member -> member.name = name);
      }
    }

    /** Text fit for one line of a report: escapes for anything not printable ASCII. */
    static String show(String text) {
      String abbreviated = abbreviate(text); // first, so that the digits are counted in full
      StringBuilder shown = new StringBuilder();
      for (int i = 0; i < abbreviated.length() && shown.length() < 160; i++) {
        char c = abbreviated.charAt(i);
        boolean printable = c >= 0x20 && c < 0x7F || c == '…';
        shown.append(printable ? "" + c : String.format("\\u%04x", (int) c));
      }
      return shown.toString();
    }

    /** Long runs of digits shortened to their ends and length, so that 1e309 fits on a line. */
    static String abbreviate(String text) {
      Matcher digits = Pattern.compile("\\d{24,}").matcher(text);
      StringBuilder shortened = new StringBuilder();
      while (digits.find()) {
        String run = digits.group();
        String ends = run.substring(0, 6) + "…" + run.substring(run.length() - 6);
        digits.appendReplacement(shortened, ends + "(" + run.length() + " digits)");
      }
      return digits.appendTail(shortened).toString();
    }
  }
}
