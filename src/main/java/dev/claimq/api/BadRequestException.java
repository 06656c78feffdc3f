package dev.claimq.api;

/** A request parameter the API cannot accept: answered 400 with this message as the detail. */
class BadRequestException extends RuntimeException {
  final String field;

  BadRequestException(String field, String message) {
    super(message);
    this.field = field;
  }
}
