package dev.claimq.faults;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A worker loop inside the harness, speaking the worker protocol over HTTP. Unlike the reference
 * workers it knows every instance: on a connection error or a 5xx it moves to the next one, so it
 * fails over when an instance dies. It never heartbeats, so a send slower than its lease loses the
 * claim (what the poison scenario wants), and it records every accepted complete.
 */
final class JavaWorker implements Runnable {
  private final String name;
  private final List<String> instances;
  private final String queue;
  private final String providerUrl;
  private final int leaseSeconds;
  private final Duration providerTimeout;
  private final History history;
  private final Http http;
  private final AtomicBoolean stopping;
  private int current;

  JavaWorker(
      String name,
      List<String> instances,
      String queue,
      String providerUrl,
      int leaseSeconds,
      Duration providerTimeout,
      History history,
      AtomicBoolean stopping) {
    this.name = name;
    this.instances = instances;
    this.queue = queue;
    this.providerUrl = providerUrl;
    this.leaseSeconds = leaseSeconds;
    this.providerTimeout = providerTimeout;
    this.history = history;
    this.http = new Http(history);
    this.stopping = stopping;
    this.current = Math.abs(name.hashCode()) % instances.size();
  }

  @Override
  public void run() {
    int failures = 0;
    while (!stopping.get()) {
      Http.Answer claim;
      try {
        claim =
            http.claimq(
                base(),
                "POST",
                "/v1/queues/" + queue + "/claim",
                Http.WORKER,
                Map.of("worker", name, "leaseSeconds", leaseSeconds, "waitSeconds", 1),
                Duration.ofSeconds(10));
      } catch (IOException e) {
        claim = null;
      } catch (InterruptedException e) {
        return;
      }
      if (claim == null || claim.status() >= 500) {
        failures++;
        failOver();
        if (!pause(backoff(failures))) {
          return;
        }
        continue;
      }
      failures = 0;
      if (claim.status() == 204) {
        continue;
      }
      if (claim.status() != 200) {
        history.violation(name + ": claim-next answered " + claim.status() + " " + claim.body());
        pause(Duration.ofSeconds(1));
        continue;
      }
      try {
        work(claim.body());
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void work(JsonNode item) throws InterruptedException {
    long id = item.path("id").asLong();
    String token = item.path("claimToken").asText();
    Map<String, Object> outcome;
    boolean done = false;
    try {
      Http.Answer sent =
          http.send(
              providerUrl,
              "POST",
              Map.of("Idempotency-Key", item.path("idempotencyKey").asText()),
              item.path("payload"),
              providerTimeout);
      int status = sent.status();
      if (status >= 200 && status < 300) {
        done = true;
        outcome = Map.of("claimToken", token, "externalRef", sent.body().path("id").asText());
      } else if (status == 408 || status == 429 || status >= 500) {
        String retryAfter = sent.headers().getOrDefault("retry-after", List.of("")).get(0);
        outcome =
            retryAfter.matches("\\d+")
                ? Map.of(
                    "claimToken",
                    token,
                    "error",
                    "provider answered " + status,
                    "retryable",
                    true,
                    "retryAfterSeconds",
                    Long.parseLong(retryAfter))
                : Map.of(
                    "claimToken", token, "error", "provider answered " + status, "retryable", true);
      } else {
        outcome =
            Map.of("claimToken", token, "error", "provider refused: " + status, "retryable", false);
      }
    } catch (IOException e) {
      outcome =
          Map.of("claimToken", token, "error", "provider unreachable: " + e, "retryable", true);
    }
    String path = "/v1/items/" + id + (done ? "/complete" : "/fail");
    // complete and fail are repeat-safe: a lost answer is asked again, bounded, on any instance.
    for (int attempt = 1; attempt <= 12; attempt++) {
      try {
        Http.Answer answer =
            http.claimq(base(), "POST", path, Http.WORKER, outcome, Duration.ofSeconds(15));
        if (answer.status() == 200) {
          if (done) {
            history.completed(id, token);
          }
          return;
        }
        if (answer.status() == 409) {
          history.staleClaims.incrementAndGet(); // the claim is gone: stop, never resend
          return;
        }
        if (answer.status() < 500) {
          history.violation(
              name + ": " + path + " answered " + answer.status() + " " + answer.body());
          return;
        }
      } catch (IOException e) {
        // fall through to the retry
      }
      failOver();
      Thread.sleep(backoff(attempt).toMillis());
    }
  }

  private String base() {
    return instances.get(current % instances.size());
  }

  private void failOver() {
    current = (current + 1) % instances.size();
  }

  private static Duration backoff(int failures) {
    long cap = Math.min(2_000, 100L << Math.min(failures, 10));
    return Duration.ofMillis(ThreadLocalRandom.current().nextLong(cap / 2, cap + 1));
  }

  private boolean pause(Duration delay) {
    try {
      Thread.sleep(delay.toMillis());
      return true;
    } catch (InterruptedException e) {
      return false;
    }
  }
}
