package dev.claimq.security;

import io.quarkus.security.identity.SecurityIdentity;
import jakarta.enterprise.context.RequestScoped;

/** The key behind the current request: its name for the record, its queues for access checks. */
@RequestScoped
public class Caller {
  private final SecurityIdentity identity;

  Caller(SecurityIdentity identity) {
    this.identity = identity;
  }

  /** The key's name, recorded on what it does. */
  public String name() {
    return key().name();
  }

  /** Refuses (403) a queue this key is not limited to. */
  public void requireQueue(String queue) {
    if (!key().mayUse(queue)) {
      throw new QueueNotAllowedException();
    }
  }

  /** The key's roles. */
  public java.util.Set<String> roles() {
    return key().roles();
  }

  /** The queues this key is limited to; empty when it may use every queue. */
  public java.util.Set<String> queues() {
    return key().queues();
  }

  private ApiKey key() {
    ApiKey key = identity.getAttribute(ApiKeyIdentityProvider.KEY_ATTRIBUTE);
    if (key == null) {
      throw new IllegalStateException("no API key behind an authorized request");
    }
    return key;
  }
}
