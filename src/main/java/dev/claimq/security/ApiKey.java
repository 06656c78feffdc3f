package dev.claimq.security;

import dev.claimq.config.KeyEntry;
import java.util.Set;

/**
 * One configured key: its name (shown in logs and on what it did), roles, the queues it may touch
 * (empty: all), and the SHA-256 of the key itself, as its entry in claimq.auth.keys says them.
 */
public record ApiKey(String name, Set<String> roles, Set<String> queues, String sha256) {

  public boolean mayUse(String queue) {
    return queues.isEmpty() || queues.contains(queue);
  }

  /** Parses one entry; the message of the exception says what is wrong with it. */
  public static ApiKey parse(String entry) {
    KeyEntry parsed = KeyEntry.parse(entry);
    return new ApiKey(parsed.name(), parsed.roles(), parsed.queues(), parsed.sha256());
  }
}
