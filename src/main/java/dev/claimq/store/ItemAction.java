package dev.claimq.store;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** An operator's retry, cancel or resolve of an item, and whose key did it. */
@Entity
@Table(name = "item_action")
public class ItemAction {
  @Id public Long id;

  @Column(name = "item_id")
  public Long itemId;

  public String action;
  public String actor;
  public Instant at;

  /** Why, for a resolve. */
  public String note;
}
