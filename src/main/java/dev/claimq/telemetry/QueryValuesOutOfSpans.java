package dev.claimq.telemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import jakarta.inject.Singleton;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Keeps the values of a request's query out of its span, the names only: a search's q is a dedupe
 * key or a reference that can name a person, a failed listing's reason a provider's words, and a
 * key sent as ?api_key= by mistake is a key. OpenTelemetry's conventions ask instrumentation to
 * scrub what is sensitive in url.query; the HTTP server's keeps it whole.
 */
@Singleton
public class QueryValuesOutOfSpans implements SpanProcessor {
  static final AttributeKey<String> URL_QUERY = AttributeKey.stringKey("url.query");
  static final String REDACTED = "REDACTED";

  @Override
  public void onStart(Context parent, ReadWriteSpan span) {
    String query = span.getAttribute(URL_QUERY);
    if (query != null) {
      span.setAttribute(URL_QUERY, namesOnly(query));
    }
  }

  /**
   * "q=ada&limit=5" as "q=REDACTED&limit=REDACTED"; a part without "=" is a value too (a key pasted
   * alone, say), so it goes whole.
   */
  static String namesOnly(String query) {
    return Arrays.stream(query.split("&", -1))
        .map(
            pair ->
                pair.contains("=")
                    ? pair.substring(0, pair.indexOf('=') + 1) + REDACTED
                    : pair.isEmpty() ? pair : REDACTED)
        .collect(Collectors.joining("&"));
  }

  @Override
  public boolean isStartRequired() {
    return true;
  }

  @Override
  public void onEnd(ReadableSpan span) {}

  @Override
  public boolean isEndRequired() {
    return false;
  }
}
