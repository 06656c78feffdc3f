package dev.claimq.store;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** An operator's policy change, pause or resume of a queue, and whose key did it. */
@Entity
@Table(name = "queue_action")
public class QueueAction {
  @Id public Long id;
  public String queue;

  /** policy, pause or resume. */
  public String action;

  public String actor;
  public Instant at;

  /** The policy as set (JSON), for a policy change. */
  public String policy;
}
