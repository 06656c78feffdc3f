package dev.claimq.telemetry;

import io.prometheus.client.exemplars.ExemplarSampler;
import io.quarkus.micrometer.runtime.export.exemplars.OpentelemetryExemplarSamplerProvider;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Prometheus exemplars (beside a histogram bucket, the trace of a request that landed in it) only
 * while traces are on. Quarkus installs its OpenTelemetry exemplar sampler whenever the
 * OpenTelemetry extension is in the build, and the sampler looks for the current span on every
 * observation of every timer and counter: with traces off, the default, there is never one to find,
 * and the look was about 1% of an enqueue's CPU.
 */
public class ExemplarsWhileTracing {

  @Produces
  @Singleton
  @Alternative
  @Priority(1)
  Optional<ExemplarSampler> exemplarSampler(
      OpentelemetryExemplarSamplerProvider quarkus,
      @ConfigProperty(name = "quarkus.otel.sdk.disabled") boolean tracesOff) {
    return tracesOff ? Optional.empty() : quarkus.exemplarSampler();
  }
}
