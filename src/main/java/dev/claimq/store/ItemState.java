package dev.claimq.store;

import com.fasterxml.jackson.annotation.JsonValue;
import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Converter;
import java.util.Locale;

/** Where an item is in its life. The names on the wire and in the database are lower case. */
public enum ItemState {
  /** Waits for an operator's approval; no worker can claim it (a queue's requireApproval). */
  HELD,
  PENDING,
  SENDING,
  DONE,
  FAILED,
  CANCELLED;

  @JsonValue
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Parses a wire name; null when it is not one. */
  public static ItemState fromWireName(String name) {
    for (ItemState state : values()) {
      if (state.wireName().equals(name)) {
        return state;
      }
    }
    return null;
  }

  /** Stores the wire name, which the table's CHECK constraint lists. */
  @Converter
  public static class DatabaseConverter implements AttributeConverter<ItemState, String> {
    @Override
    public String convertToDatabaseColumn(ItemState state) {
      return state == null ? null : state.wireName();
    }

    @Override
    public ItemState convertToEntityAttribute(String name) {
      return name == null ? null : fromWireName(name);
    }
  }
}
