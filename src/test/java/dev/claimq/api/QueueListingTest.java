package dev.claimq.api;

import static dev.claimq.Api.enqueue;
import static dev.claimq.Api.problem;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * GET /v1/queues a page at a time: by name, with totals over every page. The test key sees five
 * queues of its own (pages-a to pages-e), so that its listing holds nothing another test made.
 */
@QuarkusTest
class QueueListingTest extends AsAdmin {
  private static final String PAGES_KEY = "Bearer test-pages-key";
  private static final List<String> QUEUES =
      List.of("pages-a", "pages-b", "pages-c", "pages-d", "pages-e");

  /** Pending items per queue, each queue a different number, so that a mix-up shows. */
  private static final Map<String, Integer> PENDING =
      Map.of("pages-a", 2, "pages-b", 4, "pages-c", 1, "pages-d", 5, "pages-e", 3);

  // Each time: a repeat of an enqueue is a replay (same dedupe key, same payload), not a new item.
  @BeforeEach
  void enqueueOnce() {
    // Out of name order, so that the order of the listing is its own doing.
    for (String queue : List.of("pages-c", "pages-a", "pages-e", "pages-b", "pages-d")) {
      for (int i = 0; i < PENDING.get(queue); i++) {
        enqueue(queue, Map.of("dedupeKey", "k" + i, "payload", i))
            .then()
            .statusCode(org.hamcrest.Matchers.oneOf(200, 201));
      }
    }
  }

  private static Response page(String key, Object limit, String cursor) {
    var request = given().header("Authorization", key);
    if (limit != null) {
      request.queryParam("limit", limit);
    }
    if (cursor != null) {
      request.queryParam("cursor", cursor);
    }
    return request.get("/v1/queues");
  }

  @Test
  void pages_follow_by_name_to_the_last_with_the_same_totals_on_each() {
    List<String> names = new ArrayList<>();
    List<Integer> sizes = new ArrayList<>();
    String cursor = null;
    do {
      JsonPath page = page(PAGES_KEY, 2, cursor).then().statusCode(200).extract().jsonPath();
      List<Map<String, Object>> queues = page.getList("queues");
      sizes.add(queues.size());
      for (Map<String, Object> queue : queues) {
        String name = (String) queue.get("queue");
        names.add(name);
        assertThat(((Map<?, ?>) queue.get("counts")).get("pending"))
            .as(name)
            .isEqualTo(PENDING.get(name));
      }
      assertThat(page.getInt("totals.queues")).isEqualTo(5);
      assertThat(page.getMap("totals.counts"))
          .containsExactlyInAnyOrderEntriesOf(
              Map.of("held", 0, "pending", 15, "sending", 0, "failed", 0));
      cursor = page.getString("nextCursor");
    } while (cursor != null && sizes.size() < 10);
    assertThat(sizes).containsExactly(2, 2, 1);
    assertThat(names).containsExactlyElementsOf(QUEUES);

    // Without a limit, one page of up to 100: all five, and no cursor.
    JsonPath whole = page(PAGES_KEY, null, null).then().statusCode(200).extract().jsonPath();
    assertThat(whole.getList("queues.queue")).containsExactlyElementsOf(QUEUES);
    assertThat(whole.getString("nextCursor")).isNull();
  }

  @Test
  void a_page_that_ends_exactly_at_the_last_queue_has_no_cursor() {
    JsonPath page = page(PAGES_KEY, 5, null).then().statusCode(200).extract().jsonPath();
    assertThat(page.getList("queues.queue")).containsExactlyElementsOf(QUEUES);
    assertThat(page.getString("nextCursor")).isNull();
  }

  @Test
  void a_cursor_is_the_listing_of_the_key_that_was_given_it() {
    String pagesCursor =
        page(PAGES_KEY, 1, null).then().statusCode(200).extract().path("nextCursor");
    assertThat(pagesCursor).isNotNull();
    // The next page of the same listing follows it.
    assertThat(
            page(PAGES_KEY, 1, pagesCursor)
                .then()
                .statusCode(200)
                .extract()
                .<String>path("queues[0].queue"))
        .isEqualTo("pages-b");
    // Another key sees other queues: a cursor from this key's listing is no place in its own.
    problem(page("Bearer dev-admin-key", 1, pagesCursor), 400, "invalid-request")
        .body("errors[0].field", org.hamcrest.Matchers.equalTo("cursor"))
        .body("detail", org.hamcrest.Matchers.containsString("another listing"));
    // Nor is it a cursor of the items listing, or one of the items listing a queue cursor.
    problem(
            given()
                .header("Authorization", PAGES_KEY)
                .queryParam("cursor", pagesCursor)
                .get("/v1/items"),
            400,
            "invalid-request")
        .body("detail", org.hamcrest.Matchers.containsString("another listing"));
    String itemsCursor =
        given()
            .header("Authorization", PAGES_KEY)
            .queryParam("limit", 1)
            .get("/v1/items")
            .then()
            .statusCode(200)
            .extract()
            .path("nextCursor");
    assertThat(itemsCursor).isNotNull();
    problem(page(PAGES_KEY, 1, itemsCursor), 400, "invalid-request")
        .body("detail", org.hamcrest.Matchers.containsString("another listing"));
  }

  @Test
  void a_limit_or_cursor_it_cannot_read_is_a_400_naming_it() {
    for (Object limit : List.of(0, 501, "+5", "five", "")) {
      problem(page(PAGES_KEY, limit, null), 400, "invalid-request")
          .body("errors[0].field", org.hamcrest.Matchers.equalTo("limit"));
    }
    String pagesCursor = page(PAGES_KEY, 1, null).then().extract().path("nextCursor");
    for (String cursor : List.of("abc", "!!", pagesCursor + "=", "YWZ0ZXI6cGFnZXMtYQ")) {
      problem(page(PAGES_KEY, 1, cursor), 400, "invalid-request")
          .body("errors[0].field", org.hamcrest.Matchers.equalTo("cursor"));
    }
  }
}
