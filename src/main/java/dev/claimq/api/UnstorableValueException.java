package dev.claimq.api;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonMappingException;

/**
 * A value in a request body that cannot be stored exactly as sent (see {@link Storable}), or a
 * number too long to read: answered 400 naming the field. Jackson adds the field's path as the
 * exception passes up.
 */
class UnstorableValueException extends JsonMappingException {
  /**
   * Where inside the value, e.g. ".to" or "[2]" within a payload; empty for the value itself. A
   * number too long to read is placed from the record it is in: ".payload.n[2]".
   */
  final String inside;

  final String reason;

  UnstorableValueException(JsonParser parser, String inside, String reason) {
    super(parser, reason);
    this.inside = inside;
    this.reason = reason;
  }
}
