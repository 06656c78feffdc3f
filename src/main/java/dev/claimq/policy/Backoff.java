package dev.claimq.policy;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff with jitter: the n-th retry waits between half and all of {@code base *
 * 2^(n-1)}, never more than {@code cap}. The jitter spreads retries of items that failed together
 * (a provider outage) so they do not all come back at once.
 */
public record Backoff(Duration base, Duration cap) {

  public Backoff {
    if (base.toSeconds() < 1 || cap.compareTo(base) < 0) {
      throw new IllegalArgumentException(
          "backoff needs 1s <= base <= cap, got " + base + ", " + cap);
    }
  }

  /** Seconds to wait after the given attempt (1 = the first claim) failed. */
  public long delaySeconds(int attempt, RandomGenerator random) {
    long ceiling = ceilingSeconds(attempt);
    long floor = ceiling / 2;
    return floor + random.nextLong(ceiling - floor + 1);
  }

  /**
   * One delay per attempt, from the first up to the first whose ceiling is the cap, which stands
   * for every later attempt too: for a statement that learns the attempt number only as it runs.
   */
  public long[] scheduleSeconds(RandomGenerator random) {
    int attempts = 1;
    while (ceilingSeconds(attempts) < cap.toSeconds()) {
      attempts++;
    }
    long[] delays = new long[attempts];
    for (int i = 0; i < attempts; i++) {
      delays[i] = delaySeconds(i + 1, random);
    }
    return delays;
  }

  /** The most the given attempt's delay can be, before jitter. */
  public long ceilingSeconds(int attempt) {
    long capSeconds = cap.toSeconds();
    long delay = base.toSeconds();
    for (int i = 1; i < attempt && delay < capSeconds; i++) {
      delay *= 2;
    }
    return Math.min(delay, capSeconds);
  }
}
