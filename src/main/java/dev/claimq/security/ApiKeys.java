package dev.claimq.security;

import dev.claimq.config.ClaimqConfig;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jboss.logging.Logger;

/** The configured keys, looked up by the hash of a presented key. */
@ApplicationScoped
public class ApiKeys {
  private static final Logger LOG = Logger.getLogger(ApiKeys.class);

  /** The development keys, published in the README and in the dev and test profiles. */
  private static final List<String> PUBLISHED =
      List.of("dev-agent-key", "dev-worker-key", "dev-operator-key", "dev-admin-key");

  private final boolean enabled;
  private final Map<String, ApiKey> bySha256 = new HashMap<>();

  @Inject
  ApiKeys(ClaimqConfig config) {
    this(config.auth().enabled(), config.auth().keys().orElse(List.of()));
  }

  /** Parses the entries; the exception's message names the entry that is wrong and why. */
  public ApiKeys(boolean enabled, List<String> entries) {
    this.enabled = enabled;
    for (String entry : entries) {
      if (entry.isBlank()) {
        continue;
      }
      ApiKey key = ApiKey.parse(entry);
      if (bySha256.put(key.sha256(), key) != null) {
        throw new IllegalArgumentException(
            "claimq.auth.keys: key '" + key.name() + "' has the same hash as another key");
      }
    }
  }

  void checkOnStart(@Observes StartupEvent event) {
    requireUsable();
    List<String> published = published();
    if (enabled && !published.isEmpty() && LaunchMode.current() == LaunchMode.NORMAL) {
      LOG.warnf(
          "Keys %s are development keys that the README publishes (dev-agent-key and the"
              + " others): anyone can use them. Mint keys of your own for anything but a trial.",
          String.join(", ", published));
    }
  }

  /** The names of the configured keys that are the README's development keys, by name. */
  public List<String> published() {
    return PUBLISHED.stream()
        .map(key -> bySha256.get(MintKey.sha256(key)))
        .filter(Objects::nonNull)
        .map(ApiKey::name)
        .sorted()
        .toList();
  }

  /** Refuses to serve with authentication on and no key that could pass it. */
  public void requireUsable() {
    if (!enabled) {
      LOG.warn(
          "AUTHENTICATION IS OFF (claimq.auth.enabled=false): anyone who can reach this port can"
              + " enqueue, claim, complete and cancel work.");
      return;
    }
    if (bySha256.isEmpty()) {
      throw new IllegalStateException(
          "No API key is configured. Set CLAIMQ_AUTH_KEYS (mint one with java"
              + " src/main/java/dev/claimq/security/MintKey.java NAME ROLES), or run without"
              + " authentication with CLAIMQ_AUTH_ENABLED=false.");
    }
    LOG.infof("%d API keys configured", bySha256.size());
  }

  public boolean enabled() {
    return enabled;
  }

  public Optional<ApiKey> find(String presentedKey) {
    return Optional.ofNullable(bySha256.get(MintKey.sha256(presentedKey)));
  }
}
