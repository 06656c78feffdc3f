package dev.claimq.faults;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A drain of one queue on one instance by a few worker threads (claim, send to the provider,
 * complete) that times every call to claimq, so one drain's latency can be compared with another's.
 */
final class TimedDrain {
  private final String url;
  private final String queue;
  private final String providerUrl;
  private final History history;
  private final Http http;
  private final ConcurrentLinkedQueue<Long> micros = new ConcurrentLinkedQueue<>();

  /**
   * {@code http} is shared by the workers and by every drain of a scenario: its pooled connections
   * stay open in the service, so a client per drain would look like files the service leaks.
   */
  TimedDrain(String url, String queue, String providerUrl, Http http, History history) {
    this.http = http;
    this.url = url;
    this.queue = queue;
    this.providerUrl = providerUrl;
    this.history = history;
  }

  /** Drains until {@code open} says nothing is left (or the limit passes); returns the p99. */
  Duration run(int workers, Duration limit, FaultHarness.Condition drained)
      throws InterruptedException {
    AtomicBoolean done = new AtomicBoolean();
    long deadline = System.nanoTime() + limit.toNanos();
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < workers; w++) {
      String name = "drain-" + w;
      Thread thread =
          new Thread(
              () -> {
                while (!done.get() && System.nanoTime() < deadline) {
                  try {
                    if (!claimAndFinish(http, name)) {
                      if (drained.met()) {
                        done.set(true);
                      } else {
                        Thread.sleep(50); // the rest is under someone's lease
                      }
                    }
                  } catch (InterruptedException e) {
                    return;
                  } catch (Exception e) {
                    history.violation(name + ": " + e);
                    return;
                  }
                }
              },
              name);
      thread.start();
      threads.add(thread);
    }
    for (Thread thread : threads) {
      thread.join(limit.toMillis() + 30_000);
    }
    if (!done.get()) {
      history.violation("the timed drain of " + queue + " did not finish within " + limit);
    }
    return p99();
  }

  int calls() {
    return micros.size();
  }

  Duration p99() {
    List<Long> sorted = new ArrayList<>(micros);
    if (sorted.isEmpty()) {
      return Duration.ZERO;
    }
    sorted.sort(null);
    int index = (int) Math.ceil(sorted.size() * 0.99) - 1;
    return Duration.ofNanos(sorted.get(Math.max(0, index)) * 1_000);
  }

  /** One claim and, when it wins, the send and the complete; false when nothing was claimed. */
  private boolean claimAndFinish(Http http, String name) throws Exception {
    Http.Answer claim =
        timed(
            http,
            "POST",
            "/v1/queues/" + queue + "/claim",
            Map.of("worker", name, "leaseSeconds", 10));
    if (claim.status() != 200) {
      if (claim.status() != 204) {
        history.violation(name + ": claim-next answered " + claim.status() + " " + claim.body());
      }
      return false;
    }
    JsonNode item = claim.body();
    long id = item.path("id").asLong();
    String token = item.path("claimToken").asText();
    Http.Answer sent =
        http.send(
            providerUrl,
            "POST",
            Map.of("Idempotency-Key", item.path("idempotencyKey").asText()),
            item.path("payload"),
            Duration.ofSeconds(30));
    if (sent.status() / 100 != 2) {
      history.violation(name + ": the provider answered " + sent.status() + " for item " + id);
      return true;
    }
    Http.Answer complete =
        timed(
            http,
            "POST",
            "/v1/items/" + id + "/complete",
            Map.of("claimToken", token, "externalRef", sent.body().path("id").asText()));
    if (complete.status() == 200) {
      history.completed(id, token);
    } else if (complete.status() == 409) {
      history.staleClaims.incrementAndGet();
    } else {
      history.violation(name + ": complete of item " + id + " answered " + complete.status());
    }
    return true;
  }

  private Http.Answer timed(Http http, String method, String path, Object body)
      throws IOException, InterruptedException {
    long start = System.nanoTime();
    Http.Answer answer = http.claimq(url, method, path, Http.WORKER, body, Duration.ofSeconds(15));
    micros.add((System.nanoTime() - start) / 1_000);
    return answer;
  }
}
