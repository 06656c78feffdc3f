package dev.claimq.config;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One entry of claimq.auth.keys as written: {@code name:roles:queues:sha256}, roles and queues
 * joined by '+', queues '*' for all (empty). Read here, with the rest of the settings, so that an
 * entry that cannot be read stops the service before it touches the database.
 */
public record KeyEntry(String name, Set<String> roles, Set<String> queues, String sha256) {
  /** The roles a key may carry (the security package's Role names them one by one). */
  public static final Set<String> ROLES = Set.of("agent", "worker", "operator");

  private static final Pattern NAME = Pattern.compile("^[a-z0-9][a-z0-9._-]{0,63}$");
  private static final Pattern QUEUE = Pattern.compile("^[a-z0-9][a-z0-9._-]{0,63}$");
  private static final Pattern SHA256 = Pattern.compile("^[0-9a-f]{64}$");

  /** Parses one entry; the message of the exception says what is wrong with it. */
  public static KeyEntry parse(String entry) {
    String[] parts = entry.strip().split(":", -1);
    if (parts.length != 4) {
      throw invalid(entry, "expected name:roles:queues:sha256");
    }
    String name = parts[0];
    if (!NAME.matcher(name).matches()) {
      throw invalid(entry, "the name must be 1-64 characters of a-z, 0-9, '.', '_' or '-'");
    }
    Set<String> roles = new LinkedHashSet<>(Arrays.asList(parts[1].split("\\+")));
    if (!ROLES.containsAll(roles)) {
      throw invalid(entry, "roles are agent, worker and operator, joined by '+'");
    }
    Set<String> queues = new LinkedHashSet<>();
    if (!parts[2].equals("*")) {
      String[] named = parts[2].split("\\+");
      for (int i = 0; i < named.length; i++) {
        if (!QUEUE.matcher(named[i]).matches()) {
          // By its place, not as written: a key pasted among the queues is no queue to echo.
          throw invalid(
              entry,
              "queue "
                  + (i + 1)
                  + " of its queues is not a queue name (1-64 characters of a-z, 0-9, '.', '_'"
                  + " or '-'); use '*' for all queues");
        }
        queues.add(named[i]);
      }
    }
    String sha256 = parts[3].toLowerCase(Locale.ROOT);
    if (!SHA256.matcher(sha256).matches()) {
      throw invalid(entry, "the last part must be the key's SHA-256 in hex (64 characters)");
    }
    return new KeyEntry(name, Set.copyOf(roles), Set.copyOf(queues), sha256);
  }

  private static IllegalArgumentException invalid(String entry, String why) {
    // Only a name is echoed, never the rest, which may be a pasted secret; and what stands where
    // the name goes only when it is one and no hash (a key or a hash pasted there is not echoed).
    // An entry of one part is not echoed either: it is as likely a key pasted alone.
    String[] parts = entry.strip().split(":", 2);
    String name = parts[0];
    String which =
        parts.length > 1 && NAME.matcher(name).matches() && !SHA256.matcher(name).matches()
            ? "entry '" + name + "'"
            : parts.length == 1
                ? "entry of one part (not shown: it may be a key)"
                : "entry whose first part is no name (not shown: it may be a key or its hash)";
    return new IllegalArgumentException("claimq.auth.keys " + which + ": " + why);
  }
}
