package dev.claimq;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/** Runs the same call on many real threads released at once, for the race tests. */
public final class Race {
  private Race() {}

  /** Each of the threads calls call(i) as soon as all are ready; the answers, in thread order. */
  public static <T> List<T> of(int threads, IntFunction<T> call) throws Exception {
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<T>> calls = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        int thread = i;
        calls.add(
            pool.submit(
                () -> {
                  start.await();
                  return call.apply(thread);
                }));
      }
      start.countDown();
      List<T> answers = new ArrayList<>();
      for (Future<T> answer : calls) {
        answers.add(answer.get());
      }
      return answers;
    } finally {
      pool.shutdownNow();
    }
  }
}
