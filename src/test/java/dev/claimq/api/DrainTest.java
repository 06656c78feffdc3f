package dev.claimq.api;

import static dev.claimq.Api.claimNext;
import static dev.claimq.Api.complete;
import static dev.claimq.Api.queueEntry;
import static dev.claimq.Api.uniqueQueue;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.AsAdmin;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Many workers, one queue: every item is handed out once and completed once. */
@QuarkusTest
class DrainTest extends AsAdmin {

  @Test
  void eight_workers_drain_two_thousand_items_each_exactly_once() throws Exception {
    String queue = uniqueQueue("drain");
    int items = 2000;
    int workers = 8;
    enqueueAll(queue, items);

    Map<String, String> claimedBy = new ConcurrentHashMap<>();
    ConcurrentLinkedQueue<String> duplicates = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<Integer> unexpected = new ConcurrentLinkedQueue<>();
    AtomicInteger completed = new AtomicInteger();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int w = 0; w < workers; w++) {
        String worker = "w" + w;
        running.add(
            pool.submit(
                () -> {
                  start.await();
                  while (true) {
                    Response claimed = claimNext(queue, Map.of("worker", worker));
                    if (claimed.statusCode() == 204) {
                      return null;
                    }
                    if (claimed.statusCode() != 200) {
                      unexpected.add(claimed.statusCode());
                      continue;
                    }
                    String id = claimed.path("id");
                    if (claimedBy.putIfAbsent(id, worker) != null) {
                      duplicates.add(id);
                    }
                    int status =
                        complete(
                                id,
                                Map.of(
                                    "claimToken",
                                    claimed.path("claimToken"),
                                    "externalRef",
                                    worker))
                            .statusCode();
                    if (status == 200) {
                      completed.incrementAndGet();
                    } else {
                      unexpected.add(status);
                    }
                  }
                }));
      }
      start.countDown();
      for (Future<?> worker : running) {
        worker.get();
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(duplicates).as("ids handed out twice").isEmpty();
    assertThat(unexpected).as("statuses other than 200/204").isEmpty();
    assertThat(claimedBy).hasSize(items);
    assertThat(completed.get()).isEqualTo(items);
    assertThat(claimedBy.values().stream().distinct().count())
        .as("workers that got work")
        .isGreaterThan(1);
    // Drained: no live item left. (Its throughput is not asserted here: on a loaded machine the
    // drain can outlast the minute that doneLastMinute counts; BatchTest counts it exactly.)
    Map<String, Object> entry = queueEntry(queue);
    assertThat(entry).isNotNull();
    assertThat(((Map<?, ?>) entry.get("counts")).get("pending")).isEqualTo(0);
    assertThat(((Map<?, ?>) entry.get("counts")).get("sending")).isEqualTo(0);
  }

  private static void enqueueAll(String queue, int items) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Integer>> calls =
          IntStream.range(0, items)
              .mapToObj(
                  i ->
                      pool.submit(
                          () ->
                              given()
                                  .contentType(ContentType.JSON)
                                  .body(Map.of("dedupeKey", "item-" + i, "payload", Map.of("n", i)))
                                  .post("/v1/queues/{queue}/items", queue)
                                  .statusCode()))
              .toList();
      for (Future<Integer> call : calls) {
        assertThat(call.get()).isEqualTo(201);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
