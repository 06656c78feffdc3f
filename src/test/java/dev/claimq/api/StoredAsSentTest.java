package dev.claimq.api;

import static dev.claimq.Api.claim;
import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.item;
import static dev.claimq.Api.problem;
import static dev.claimq.Api.uniqueQueue;
import static dev.claimq.api.HostileRequests.concat;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.Api;
import dev.claimq.AsAdmin;
import dev.claimq.PlainHttp;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A request is stored exactly as sent, or refused with a 400 that names the field: no NUL, lone
 * surrogate, stray byte, rounded number, repeated field or out-of-range time is ever rewritten on
 * the way in. Bodies here are written by hand, byte for byte, since a JSON library would repair
 * exactly what is being tested.
 */
@QuarkusTest
class StoredAsSentTest extends AsAdmin {
  @TestHTTPResource("/")
  URI base;

  private static final String ADMIN = "Bearer " + AsAdmin.ADMIN;
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void a_nul_in_any_stored_string_is_a_400_naming_the_field() throws Exception {
    String queue = uniqueQueue("nul");
    String token = heldToken(queue);
    String id = heldId;
    Map<String, String[]> cases = new LinkedHashMap<>();
    cases.put(
        "dedupeKey",
        new String[] {
          "/v1/queues/" + queue + "/items", "{\"dedupeKey\":\"k\\u0000\",\"payload\":1}"
        });
    cases.put(
        "payload.to",
        new String[] {
          "/v1/queues/" + queue + "/items",
          "{\"dedupeKey\":\"k\",\"payload\":{\"to\":\"a\\u0000\"}}"
        });
    cases.put(
        "payload",
        new String[] {
          "/v1/queues/" + queue + "/items", "{\"dedupeKey\":\"k\",\"payload\":{\"t\\u0000o\":1}}"
        });
    cases.put(
        "items[0].dedupeKey",
        new String[] {
          "/v1/queues/" + queue + "/items:batch",
          "{\"items\":[{\"dedupeKey\":\"\\u0000\",\"payload\":1}]}"
        });
    cases.put(
        "worker", new String[] {"/v1/queues/" + queue + "/claim", "{\"worker\":\"w\\u0000\"}"});
    cases.put(
        "claimToken",
        new String[] {
          "/v1/items/" + id + "/complete", "{\"claimToken\":\"" + token + "\\u0000\"}"
        });
    cases.put(
        "externalRef",
        new String[] {
          "/v1/items/" + id + "/complete",
          "{\"claimToken\":\"" + token + "\",\"externalRef\":\"m\\u0000\"}"
        });
    cases.put(
        "next.worker",
        new String[] {
          "/v1/items/" + id + "/complete",
          "{\"claimToken\":\"" + token + "\",\"next\":{\"worker\":\"w\\u0000\"}}"
        });
    cases.put(
        "items[0].externalRef",
        new String[] {
          "/v1/items:complete",
          "{\"items\":[{\"id\":\""
              + id
              + "\",\"claimToken\":\""
              + token
              + "\",\"externalRef\":\"\\u0000\"}]}"
        });
    String before = item(id).asString();

    for (Map.Entry<String, String[]> c : cases.entrySet()) {
      HttpResponse<String> response = post(c.getValue()[0], bytes(c.getValue()[1]));
      assertInvalid(response, c.getKey(), "U+0000");
    }

    assertThat(item(id).asString()).as("the held item").isEqualTo(before);
    assertThat(listed(queue)).as("items in the queue").hasSize(1);
  }

  @Test
  void a_nul_in_a_failure_reason_is_dropped_like_any_control_character() throws Exception {
    String queue = uniqueQueue("nul-reason");
    String token = heldToken(queue);

    HttpResponse<String> response =
        post(
            "/v1/items/" + heldId + "/fail",
            bytes("{\"claimToken\":\"" + token + "\",\"error\":\"SMTP\\u0000 451\"}"));

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(json.readTree(response.body()).path("lastError").asText()).isEqualTo("SMTP 451");
  }

  @Test
  void lone_surrogates_are_refused_so_distinct_keys_never_become_one_item() throws Exception {
    String queue = uniqueQueue("surrogate");
    for (String key : List.of("k\\ud800", "k\\udfff", "\\udc00k", "k\\ud800\\ud800")) {
      HttpResponse<String> response =
          post(
              "/v1/queues/" + queue + "/items",
              bytes("{\"dedupeKey\":\"" + key + "\",\"payload\":1}"));
      assertInvalid(response, "dedupeKey", "lone surrogate");
    }
    assertInvalid(
        post(
            "/v1/queues/" + queue + "/items",
            bytes("{\"dedupeKey\":\"k\",\"payload\":\"a\\ud800b\"}")),
        "payload",
        "lone surrogate");

    // A real pair, escaped or not, is one character and is stored as sent.
    String pair = "{\"dedupeKey\":\"k\\ud83d\\udce7\",\"payload\":\"\uD83D\uDCE7\"}";
    HttpResponse<String> created = post("/v1/queues/" + queue + "/items", bytes(pair));
    assertThat(created.statusCode()).isEqualTo(201);
    JsonNode stored = json.readTree(created.body());
    assertThat(stored.path("dedupeKey").asText()).isEqualTo("k\uD83D\uDCE7");
    assertThat(stored.path("payload").asText()).isEqualTo("\uD83D\uDCE7");
    assertThat(listed(queue)).hasSize(1);
  }

  @Test
  void bytes_that_are_not_utf8_are_a_400_on_every_endpoint_with_a_body() throws Exception {
    String queue = uniqueQueue("utf8");
    String token = heldToken(queue);
    String id = heldId;
    String before = item(id).asString();
    Map<String, byte[]> broken = new LinkedHashMap<>();
    broken.put("a stray FF", new byte[] {(byte) 0xff});
    broken.put("overlong NUL (C0 80)", new byte[] {(byte) 0xc0, (byte) 0x80});
    broken.put("overlong 'A' (C1 81)", new byte[] {(byte) 0xc1, (byte) 0x81});
    broken.put(
        "an encoded surrogate (ED A0 80)", new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80});
    broken.put("a cut sequence (E2 82)", new byte[] {(byte) 0xe2, (byte) 0x82});
    broken.put(
        "past U+10FFFF (F4 90 80 80)",
        new byte[] {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80});
    Map<String, String[]> endpoints = new LinkedHashMap<>();
    endpoints.put(
        "enqueue",
        new String[] {"/v1/queues/" + queue + "/items", "{\"dedupeKey\":\"k", "\",\"payload\":1}"});
    endpoints.put(
        "enqueue batch",
        new String[] {
          "/v1/queues/" + queue + "/items:batch",
          "{\"items\":[{\"dedupeKey\":\"k",
          "\",\"payload\":1}]}"
        });
    endpoints.put(
        "claim next", new String[] {"/v1/queues/" + queue + "/claim", "{\"worker\":\"w", "\"}"});
    endpoints.put("claim", new String[] {"/v1/items/" + id + "/claim", "{\"worker\":\"w", "\"}"});
    endpoints.put(
        "heartbeat",
        new String[] {"/v1/items/" + id + "/heartbeat", "{\"claimToken\":\"" + token, "\"}"});
    endpoints.put(
        "complete",
        new String[] {
          "/v1/items/" + id + "/complete",
          "{\"claimToken\":\"" + token + "\",\"externalRef\":\"m",
          "\"}"
        });
    endpoints.put(
        "fail",
        new String[] {
          "/v1/items/" + id + "/fail", "{\"claimToken\":\"" + token + "\",\"error\":\"e", "\"}"
        });
    endpoints.put(
        "complete batch",
        new String[] {
          "/v1/items:complete",
          "{\"items\":[{\"id\":\"" + id + "\",\"claimToken\":\"" + token + "\",\"externalRef\":\"m",
          "\"}]}"
        });
    endpoints.put(
        "fail batch",
        new String[] {
          "/v1/items:fail",
          "{\"items\":[{\"id\":\"" + id + "\",\"claimToken\":\"" + token + "\",\"error\":\"e",
          "\"}]}"
        });

    for (Map.Entry<String, String[]> endpoint : endpoints.entrySet()) {
      for (Map.Entry<String, byte[]> bad : broken.entrySet()) {
        byte[] body =
            concat(bytes(endpoint.getValue()[1]), bad.getValue(), bytes(endpoint.getValue()[2]));
        HttpResponse<String> response = post(endpoint.getValue()[0], body);
        assertThat(response.statusCode())
            .as(endpoint.getKey() + " with " + bad.getKey())
            .isEqualTo(400);
        assertProblemJson(response, 400);
        assertThat(json.readTree(response.body()).path("detail").asText()).contains("UTF-8");
      }
    }

    assertThat(item(id).asString()).as("the held item").isEqualTo(before);
    assertThat(listed(queue)).as("items in the queue").hasSize(1);
  }

  @Test
  void payload_numbers_are_stored_exactly_as_jsonb_keeps_them() throws Exception {
    String queue = uniqueQueue("numbers");
    String sent =
        "{\"huge\":1e309,\"precise\":0.30000000000000000001,\"scaled\":1.50,\"small\":1E-3}";
    HttpResponse<String> created =
        post(
            "/v1/queues/" + queue + "/items",
            bytes("{\"dedupeKey\":\"n\",\"payload\":" + sent + "}"));
    assertThat(created.statusCode()).isEqualTo(201);
    String id = json.readTree(created.body()).path("id").asText();

    String stored = item(id).asString();
    assertThat(stored).contains("\"huge\": 1" + "0".repeat(309) + ",");
    assertThat(stored).contains("\"precise\": 0.30000000000000000001");
    assertThat(stored).contains("\"scaled\": 1.50");
    assertThat(stored).contains("\"small\": 0.001");
  }

  @Test
  void a_number_rounded_by_a_double_is_other_work_not_a_replay() throws Exception {
    String queue = uniqueQueue("numbers-replay");
    String path = "/v1/queues/" + queue + "/items";
    assertThat(post(path, bytes("{\"dedupeKey\":\"n\",\"payload\":{\"a\":0.3}}")).statusCode())
        .isEqualTo(201);

    HttpResponse<String> other =
        post(path, bytes("{\"dedupeKey\":\"n\",\"payload\":{\"a\":0.30000000000000000001}}"));

    assertThat(other.statusCode()).isEqualTo(422);
  }

  @Test
  void a_number_with_more_digits_than_can_be_stored_is_a_400() throws Exception {
    String queue = uniqueQueue("numbers-huge");
    for (String number : List.of("1e1001", "1e-1001", "1e1000000", "-1E+131072")) {
      assertInvalid(
          post(
              "/v1/queues/" + queue + "/items",
              bytes("{\"dedupeKey\":\"n\",\"payload\":{\"n\":[" + number + "]}}")),
          "payload.n[0]",
          "digits");
    }
    assertThat(listed(queue)).isEmpty();
  }

  @Test
  void a_number_of_up_to_1000_digits_before_and_after_the_point_is_stored_as_sent()
      throws Exception {
    String path = "/v1/queues/" + uniqueQueue("numbers-long") + "/items";
    List<String> numbers =
        List.of(
            "0." + "1".repeat(1000),
            "1".repeat(500) + "." + "1".repeat(501),
            "9".repeat(1000) + ".0",
            "-" + "9".repeat(1000) + "." + "9".repeat(1000),
            "-" + "9".repeat(1000));
    int key = 0;
    for (String number : numbers) {
      String body = "{\"dedupeKey\":\"k" + ++key + "\",\"payload\":{\"n\":" + number + "}}";
      HttpResponse<String> created = post(path, bytes(body));

      assertThat(created.statusCode()).as(shortened(number) + ": " + created.body()).isEqualTo(201);
      assertThat(answeredNumber(created)).isEqualTo(number);
      assertThat(post(path, bytes(body)).statusCode()).as("its replay").isEqualTo(200);
    }
  }

  @Test
  void a_number_answered_as_stored_is_the_same_work_when_sent_again() throws Exception {
    String path = "/v1/queues/" + uniqueQueue("numbers-back") + "/items";
    int key = 0;
    // Each is answered written out in full, up to 1,002 characters.
    for (String number : List.of("1e-1000", "-1.5e-999", "1e999", "1.000e996")) {
      String sent = "{\"dedupeKey\":\"k" + ++key + "\",\"payload\":{\"n\":%s}}";
      HttpResponse<String> created = post(path, bytes(sent.formatted(number)));
      assertThat(created.statusCode()).as(number + ": " + created.body()).isEqualTo(201);
      String answered = answeredNumber(created);

      HttpResponse<String> again = post(path, bytes(sent.formatted(answered)));

      assertThat(again.statusCode()).as(number + " as answered: " + again.body()).isEqualTo(200);
      assertThat(answeredNumber(again)).isEqualTo(answered);
    }
  }

  @Test
  void a_number_too_long_is_a_400_naming_where_it_is_and_saying_the_rule() throws Exception {
    String queue = uniqueQueue("numbers-long-refused");
    String single = "/v1/queues/" + queue + "/items";
    String batch = "/v1/queues/" + queue + "/items:batch";
    String over = "1".repeat(1001);
    String farOver = "1".repeat(3000);
    // Path, body, the field the answer must name.
    String[][] cases = {
      {single, "{\"dedupeKey\":\"k\",\"payload\":" + over + "}", "payload"},
      {single, "{\"dedupeKey\":\"k\",\"payload\":0." + over + "}", "payload"},
      {single, "{\"dedupeKey\":\"k\",\"payload\":" + farOver + "}", "payload"},
      {single, "{\"dedupeKey\":\"k\",\"payload\":{\"n\":[1," + over + "]}}", "payload.n[1]"},
      {single, "{\"dedupeKey\":\"k\",\"payload\":{\"n\":[1," + farOver + "]}}", "payload.n[1]"},
      {
        single,
        "{\"dedupeKey\":\"k\",\"payload\":{\"a\":{\"b\":-0." + farOver + "}}}",
        "payload.a.b"
      },
      {single, "{\"dedupeKey\":\"k\",\"payload\":1,\"priority\":" + farOver + "}", "priority"},
      {
        batch,
        "{\"items\":[{\"dedupeKey\":\"a\",\"payload\":1},{\"dedupeKey\":\"k\",\"payload\":"
            + farOver
            + "}]}",
        "items[1].payload"
      },
      {
        batch,
        "{\"items\":[{\"dedupeKey\":\"a\",\"payload\":1},{\"dedupeKey\":\"k\",\"payload\":{\"n\":"
            + over
            + "}}]}",
        "items[1].payload.n"
      },
    };
    for (String[] c : cases) {
      HttpResponse<String> answer = post(c[0], bytes(c[1]));

      assertInvalid(answer, c[2], "1000 digits before");
      assertThat(answer.body()).doesNotContain("StreamReadConstraints");
    }
    HttpResponse<String> bare = post(single, bytes(farOver));
    assertProblemJson(bare, 400);
    assertThat(json.readTree(bare.body()).path("detail").asText())
        .isEqualTo(
            "The body is a number written with more than 2010 digits (a number may have 1000"
                + " digits before the decimal point and 1000 after it, and an exponent).");
    assertThat(listed(queue)).isEmpty();
  }

  @Test
  void nesting_past_the_limit_is_a_400_naming_the_field_and_the_limit() throws Exception {
    String queue = uniqueQueue("nesting");
    String single = "/v1/queues/" + queue + "/items";
    String batch = "/v1/queues/" + queue + "/items:batch";
    // The body is level 1: a payload's own arrays start at 2.
    int fits = 1000 - 1;
    String past = "[".repeat(fits + 1) + "]".repeat(fits + 1);
    String objects = "{\"a\":".repeat(5_000) + "1" + "}".repeat(5_000);
    assertNestedTooDeep(
        post(single, bytes("{\"dedupeKey\":\"k\",\"payload\":" + past + "}")), "payload");
    assertNestedTooDeep(
        post(single, bytes("{\"dedupeKey\":\"k\",\"payload\":" + objects + "}")), "payload");
    assertNestedTooDeep(
        post(
            batch,
            bytes(
                "{\"items\":[{\"dedupeKey\":\"a\",\"payload\":1},{\"dedupeKey\":\"k\","
                    + "\"payload\":"
                    + objects
                    + "}]}")),
        "items[1].payload");
    assertThat(listed(queue)).isEmpty();
    // Up to the limit, the payload is stored.
    String deepest = "[".repeat(fits) + "]".repeat(fits);
    HttpResponse<String> stored =
        post(single, bytes("{\"dedupeKey\":\"k\",\"payload\":" + deepest + "}"));
    assertThat(stored.statusCode()).as(stored.body()).isEqualTo(201);
  }

  private void assertNestedTooDeep(HttpResponse<String> answer, String field) throws Exception {
    String reason =
        "nests arrays and objects past the limit of 1000 levels (the body itself is level 1)";
    assertInvalid(answer, field, reason);
    JsonNode problem = json.readTree(answer.body());
    assertThat(problem.path("detail").asText())
        .isEqualTo("The value of '" + field + "' " + reason + ".");
    assertThat(problem.path("errors").get(0).path("message").asText()).isEqualTo(reason);
  }

  /** The number a payload {"n": ...} is answered with, as written in the answer. */
  private static String answeredNumber(HttpResponse<String> answer) {
    Matcher number = Pattern.compile("\"n\": ?(-?[0-9][0-9.eE+-]*)").matcher(answer.body());
    assertThat(number.find()).as(answer.body()).isTrue();
    return number.group(1);
  }

  private static String shortened(String text) {
    return text.length() <= 40 ? text : text.substring(0, 40) + "… (" + text.length() + ")";
  }

  @Test
  void the_payload_limit_counts_numbers_as_they_are_stored_not_as_sent() throws Exception {
    String queue = uniqueQueue("numbers-expand");
    // 300 bytes of exponents as sent; 300 numbers of 1,000 digits each as jsonb stores them.
    String numbers = String.join(",", java.util.Collections.nCopies(300, "1e999"));
    String body = "{\"dedupeKey\":\"n\",\"payload\":[" + numbers + "]}";

    HttpResponse<String> single = post("/v1/queues/" + queue + "/items", bytes(body));
    HttpResponse<String> batch =
        post("/v1/queues/" + queue + "/items:batch", bytes("{\"items\":[" + body + "]}"));

    assertProblemJson(single, 413);
    assertProblemJson(batch, 413);
    assertThat(listed(queue)).isEmpty();
  }

  @Test
  void a_field_named_twice_is_a_400_everywhere_payloads_included() throws Exception {
    String queue = uniqueQueue("twice");
    String token = heldToken(queue);
    String id = heldId;
    String before = item(id).asString();
    Map<String, String> bodies = new LinkedHashMap<>();
    bodies.put(
        "/v1/queues/" + queue + "/items",
        "{\"dedupeKey\":\"a\",\"payload\":1,\"dedupeKey\":\"b\"}");
    bodies.put(
        "/v1/queues/" + queue + "/items?payload",
        "{\"dedupeKey\":\"a\",\"payload\":{\"to\":1,\"to\":2}}");
    bodies.put(
        "/v1/queues/" + queue + "/claim",
        "{\"worker\":\"a\",\"leaseSeconds\":60,\"waitSeconds\":0,\"worker\":\"b\"}");
    bodies.put(
        "/v1/items/" + id + "/claim", "{\"worker\":\"a\",\"leaseSeconds\":60,\"worker\":\"b\"}");
    bodies.put(
        "/v1/items/" + id + "/heartbeat",
        "{\"claimToken\":\"" + token + "\",\"leaseSeconds\":60,\"leaseSeconds\":61}");
    bodies.put(
        "/v1/items/" + id + "/complete",
        "{\"claimToken\":\"" + token + "\",\"externalRef\":\"a\",\"externalRef\":\"b\"}");
    bodies.put(
        "/v1/items/" + id + "/fail",
        "{\"claimToken\":\""
            + token
            + "\",\"error\":\"e\",\"retryable\":true,\"retryable\":false}");

    for (Map.Entry<String, String> body : bodies.entrySet()) {
      HttpResponse<String> response =
          post(body.getKey().replace("?payload", ""), bytes(body.getValue()));
      assertThat(response.statusCode()).as(body.getValue()).isEqualTo(400);
      assertProblemJson(response, 400);
      assertThat(json.readTree(response.body()).path("detail").asText()).contains("twice");
    }

    assertThat(item(id).asString()).isEqualTo(before);
    assertThat(listed(queue)).hasSize(1);
  }

  @Test
  void a_run_at_outside_what_is_stored_is_a_400_on_single_and_batch_enqueues() throws Exception {
    String queue = uniqueQueue("run-at");
    for (String runAt :
        List.of(
            "+300000-01-01T00:00:00Z",
            "+10000-01-01T00:00:00Z",
            "+02026-12-07T05:00:00Z",
            "0000-01-01T00:00:00Z",
            "-0001-01-01T00:00:00Z",
            "-300000-01-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
            "2026-01-01T00:00:00.1234567Z")) {
      problem(
              enqueue(queue, Map.of("dedupeKey", "k", "payload", 1, "runAt", runAt)),
              400,
              "invalid-request")
          .body("errors[0].field", org.hamcrest.Matchers.equalTo("runAt"));
      problem(
              Api.json()
                  .body(
                      Map.of(
                          "items", List.of(Map.of("dedupeKey", "k", "payload", 1, "runAt", runAt))))
                  .post("/v1/queues/{queue}/items:batch", queue),
              400,
              "invalid-request")
          .body("errors[0].field", org.hamcrest.Matchers.equalTo("items[0].runAt"));
    }
    assertThat(listed(queue)).isEmpty();
    // The bounds themselves are stored.
    enqueued(queue, Map.of("dedupeKey", "first", "payload", 1, "runAt", "1970-01-01T00:00:00Z"));
    enqueued(
        queue, Map.of("dedupeKey", "last", "payload", 1, "runAt", "9999-12-31T23:59:59.999999Z"));
    io.restassured.RestAssured.given().get("/v1/queues").then().statusCode(200);
  }

  @Test
  void every_endpoint_with_a_body_accepts_it_chunked() throws Exception {
    String queue = uniqueQueue("chunked");
    String token = heldToken(queue);
    String id = heldId;
    String other = enqueued(queue, "other", Map.of("n", 2));
    String later = uniqueQueue("chunked-empty");

    assertThat(chunked("/v1/queues/" + later + "/claim", "").statusCode())
        .as("empty claim next")
        .isEqualTo(204);
    assertThat(chunked("/v1/queues/" + later + "/claim", "{}").statusCode())
        .as("claim next")
        .isEqualTo(204);
    assertThat(chunked("/v1/queues/" + later + "/claim", "{\"max\":3}").statusCode())
        .as("claim many")
        .isEqualTo(204);
    assertThat(
            chunked("/v1/queues/" + queue + "/items", "{\"dedupeKey\":\"c\",\"payload\":1}")
                .statusCode())
        .as("enqueue")
        .isEqualTo(201);
    assertThat(
            chunked(
                    "/v1/queues/" + queue + "/items:batch",
                    "{\"items\":[{\"dedupeKey\":\"d\",\"payload\":1}]}")
                .statusCode())
        .as("enqueue batch")
        .isEqualTo(200);
    assertThat(chunked("/v1/items/" + other + "/claim", "").statusCode())
        .as("empty claim")
        .isEqualTo(200);
    assertThat(
            chunked("/v1/items/" + id + "/heartbeat", "{\"claimToken\":\"" + token + "\"}")
                .statusCode())
        .as("heartbeat")
        .isEqualTo(200);
    assertThat(
            chunked(
                    "/v1/items/" + id + "/fail",
                    "{\"claimToken\":\"" + token + "\",\"error\":\"e\"}")
                .statusCode())
        .as("fail")
        .isEqualTo(200);
    assertThat(
            chunked(
                    "/v1/items:complete",
                    "{\"items\":[{\"id\":\"" + id + "\",\"claimToken\":\"" + token + "\"}]}")
                .statusCode())
        .as("complete batch")
        .isEqualTo(200);
    assertThat(
            chunked(
                    "/v1/items:fail",
                    "{\"items\":[{\"id\":\""
                        + id
                        + "\",\"claimToken\":\""
                        + token
                        + "\",\"error\":\"e\"}]}")
                .statusCode())
        .as("fail batch")
        .isEqualTo(200);
    String next =
        json.readTree(chunked("/v1/queues/" + queue + "/claim", "{}").body())
            .path("claimToken")
            .asText();
    assertThat(next).isNotBlank();
    HttpResponse<String> tooLarge =
        chunked("/v1/queues/" + later + "/claim", "{\"worker\":\"" + "x".repeat(1_100_000) + "\"}");
    assertThat(tooLarge.statusCode()).as("an oversized chunked claim").isEqualTo(413);
    assertProblemJson(tooLarge, 413);
  }

  @Test
  void location_is_relative_whatever_host_the_client_names() {
    String queue = uniqueQueue("location");
    Response created =
        io.restassured.RestAssured.given()
            .contentType("application/json")
            .header("Host", "evil.example")
            .body(Map.of("dedupeKey", "k", "payload", 1))
            .post("/v1/queues/{queue}/items", queue);
    created.then().statusCode(201);
    assertThat(created.header("Location")).isEqualTo("/v1/items/" + created.path("id"));
  }

  @Test
  void to_a_queue_limited_key_an_item_of_another_queue_is_no_such_item() throws Exception {
    String queue = uniqueQueue("hidden");
    String token = heldToken(queue);
    String key = "Bearer test-elsewhere-key";
    HttpResponse<String> missing = send("GET", "/v1/items/999999999999", null, key);
    HttpResponse<String> hidden = send("GET", "/v1/items/" + heldId, null, key);

    assertProblemJson(hidden, 404);
    assertThat(json.readTree(hidden.body()).path("detail").asText().replace(heldId, "N"))
        .isEqualTo(
            json.readTree(missing.body()).path("detail").asText().replace("999999999999", "N"));
    for (String action : List.of("claim", "attempts", "actions", "retry", "cancel")) {
      String method = action.startsWith("a") ? "GET" : "POST";
      assertThat(send(method, "/v1/items/" + heldId + "/" + action, null, key).statusCode())
          .as(action)
          .isEqualTo(404);
    }
    HttpResponse<String> batch =
        send(
            "POST",
            "/v1/items:complete",
            "{\"items\":[{\"id\":\""
                + heldId
                + "\",\"claimToken\":\""
                + token
                + "\"},{\"id\":\"999999999999\",\"claimToken\":\"x\"}]}",
            key);
    // Per entry, an item of another queue and an id that names nothing answer alike.
    assertThat(batch.statusCode()).isEqualTo(200);
    assertThat(json.readTree(batch.body()).path("results").findValuesAsText("status"))
        .containsExactly("404", "404");
    assertThat(item(heldId).<String>path("state")).isEqualTo("sending");

    HttpResponse<String> forbidden =
        send("POST", "/v1/queues/" + queue + "/items", "{\"dedupeKey\":\"k\",\"payload\":1}", key);
    assertProblemJson(forbidden, 403);
    assertThat(forbidden.body()).doesNotContain(queue).doesNotContain("elsewhere");
  }

  // --- fixtures and plumbing

  private String heldId;

  /** Enqueues and claims one item in the queue; returns its token (its id in heldId). */
  private String heldToken(String queue) {
    heldId = enqueued(queue, "held", Map.of("n", 1));
    return claim(heldId, Map.of("worker", "w", "leaseSeconds", 600)).path("claimToken");
  }

  private List<JsonNode> listed(String queue) throws Exception {
    String page =
        io.restassured.RestAssured.given()
            .queryParam("queue", queue)
            .get("/v1/items")
            .then()
            .statusCode(200)
            .extract()
            .asString();
    return json.readTree(page).path("items").findParents("id");
  }

  private void assertInvalid(HttpResponse<String> response, String field, String reason)
      throws Exception {
    assertProblemJson(response, 400);
    JsonNode problem = json.readTree(response.body());
    assertThat(problem.path("detail").asText())
        .as(response.body())
        .contains("'" + field + "'")
        .contains(reason);
    assertThat(problem.path("errors").get(0).path("field").asText()).isEqualTo(field);
  }

  private void assertProblemJson(HttpResponse<String> response, int status) throws Exception {
    PlainHttp.assertProblem(response, status);
  }

  private HttpResponse<String> post(String path, byte[] body) throws Exception {
    return http().post(path, body, ADMIN);
  }

  private HttpResponse<String> chunked(String path, String body) throws Exception {
    return http().postChunked(path, bytes(body), ADMIN);
  }

  private HttpResponse<String> send(String method, String path, String body, String authorization)
      throws Exception {
    return http().send(method, path, body, authorization);
  }

  private PlainHttp http() {
    return new PlainHttp(base);
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
