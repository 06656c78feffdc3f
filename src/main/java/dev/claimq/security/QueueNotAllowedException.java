package dev.claimq.security;

import io.quarkus.security.ForbiddenException;

/**
 * A key limited to some queues asked for another: 403. It says no more than that, neither the key's
 * queues nor anything of the other queue's.
 */
public class QueueNotAllowedException extends ForbiddenException {
  public QueueNotAllowedException() {
    super("This API key may not use this queue.");
  }
}
