package dev.claimq.api;

/** A body or payload over its configured limit: answered 413 with this message. */
class TooLargeException extends RuntimeException {
  TooLargeException(String message) {
    super(message);
  }
}
