package dev.claimq.api;

import dev.claimq.queue.Outcome;
import dev.claimq.store.Item;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.HttpHeaders;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * An item's trace. The W3C traceparent an enqueue carries is stored with the item exactly as sent
 * and shown to its workers, and claimq's spans for the item's claims and finishes continue it.
 *
 * <p>Each such span's parent is the stored traceparent, and it links to the server span of the
 * request that did the work. That way round, the enqueue (whose server span the agent's header
 * already parents), each claim and each finish sit in one trace, the agent's, whatever the worker
 * sends, and the link leads from there to the request's own span and its timing. The other way
 * round, a child of the request's span linking to the agent's, would leave every step in a trace of
 * its own, joined only by links, which most trace viewers do not follow.
 */
@ApplicationScoped
class ItemTraces {
  static final String HEADER = "traceparent";

  /**
   * The one form stored (the item table's CHECK): version 00's four fields, lowercase hex. A later
   * version is taken in this layout (W3C's readers would drop fields after the flags, which this
   * refuses rather than store the header other than as sent); the propagator refuses version ff.
   */
  static final String FORMAT = "^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$";

  private static final Pattern W3C = Pattern.compile(FORMAT);

  /** A lone traceparent value, read by the propagator as it reads a request's headers. */
  private static final TextMapGetter<String> VALUE =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(String traceparent) {
          return Set.of(HEADER);
        }

        @Override
        public String get(String traceparent, String key) {
          return HEADER.equals(key) ? traceparent : null;
        }
      };

  private final Tracer tracer;

  ItemTraces(OpenTelemetry openTelemetry) {
    this.tracer = openTelemetry.getTracer("dev.claimq");
  }

  /**
   * The request's traceparent header, to store as sent; null when there is none. A header that is
   * not one W3C traceparent is refused, not dropped: the agent asked for its trace to go on.
   */
  static String traceparent(HttpHeaders headers) {
    return traceparent(headers.getRequestHeader(HEADER));
  }

  /** The traceparent header's values as received, read as {@link #traceparent(HttpHeaders)}. */
  static String traceparent(List<String> values) {
    if (values == null || values.isEmpty()) {
      return null;
    }
    if (values.size() > 1) {
      throw new BadRequestException(
          HEADER, "The traceparent header is given " + values.size() + " times: give it once.");
    }
    String value = values.get(0);
    if (!W3C.matcher(value).matches() || !parentOf(value).isValid()) {
      throw new BadRequestException(
          HEADER,
          "traceparent must be a W3C traceparent in version 00's layout, lowercase hex"
              + " (00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>, neither id all zeros;"
              + " a later version than 00, not ff, in the same layout), such as"
              + " 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01.");
    }
    return value;
  }

  /** The span context a stored traceparent names, as the W3C propagator reads it. */
  static SpanContext parentOf(String traceparent) {
    Context extracted =
        W3CTraceContextPropagator.getInstance().extract(Context.root(), traceparent, VALUE);
    return Span.fromContext(extracted).getSpanContext();
  }

  /** The span of the current request, taken on its own thread, for the spans to link to. */
  static SpanContext request() {
    return Span.current().getSpanContext();
  }

  /**
   * Records {@code name} in the item's trace, from {@code start} to now, when the item carries a
   * traceparent: what this request did to it, with the outcome.
   */
  void record(String name, Item item, Outcome outcome, SpanContext request, Instant start) {
    if (item == null || item.traceparent == null) {
      return;
    }
    var span =
        tracer
            .spanBuilder(name)
            .setParent(Context.root().with(Span.wrap(parentOf(item.traceparent))))
            .setSpanKind(SpanKind.INTERNAL)
            .setStartTimestamp(start)
            .setAttribute("claimq.item.id", Long.toString(item.id))
            .setAttribute("claimq.queue", item.queue)
            .setAttribute("claimq.attempt", (long) item.attempts)
            .setAttribute("claimq.outcome", outcome.name().toLowerCase(Locale.ROOT));
    if (request.isValid()) {
      span.addLink(request);
    }
    span.startSpan().end();
  }
}
