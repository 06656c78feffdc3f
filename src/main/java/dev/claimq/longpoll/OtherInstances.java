package dev.claimq.longpoll;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The other claimq instances listening on this schema's channel, as far as they have been heard.
 * Each says "@here" when it begins to listen and every {@link #HEARTBEAT_NANOS} after, and "@bye"
 * when it stops; one not heard from for three heartbeats and a second is gone (killed, or cut off
 * from the database). Times are {@link System#nanoTime()}. Used by the listener's thread alone.
 */
final class OtherInstances {
  static final long HEARTBEAT_NANOS = TimeUnit.SECONDS.toNanos(5);
  static final long PRESENT_NANOS = 3 * HEARTBEAT_NANOS + TimeUnit.SECONDS.toNanos(1);

  private final Map<String, Long> heardAt = new HashMap<>();

  /** Answers whether the instance is new here: then it has not heard of this one either. */
  boolean heard(String tag, long now) {
    return heardAt.put(tag, now) == null;
  }

  void gone(String tag) {
    heardAt.remove(tag);
  }

  /** How many have been heard from lately; forgets the others. */
  int present(long now) {
    heardAt.values().removeIf(heard -> now - heard > PRESENT_NANOS);
    return heardAt.size();
  }
}
