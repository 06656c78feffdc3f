package dev.claimq.api;

import dev.claimq.store.SchemaWatch;
import jakarta.inject.Singleton;
import java.util.Optional;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses every request, before anything is read or written, once a newer release has migrated the
 * schema under this instance (SchemaWatch): a 503 that sends the client to another instance.
 */
@Singleton
public class SchemaGate {
  private final SchemaWatch watch;

  SchemaGate(SchemaWatch watch) {
    this.watch = watch;
  }

  @ServerRequestFilter(preMatching = true)
  public void refuseOnNewerSchema() {
    requireCurrent();
  }

  /** Throws the 503 while the schema is newer than this instance. */
  public void requireCurrent() {
    Optional<Outcomes.RefusedException> refusal = refusal();
    if (refusal.isPresent()) {
      throw refusal.get();
    }
  }

  /** The problem (a 503) to answer while the schema is newer than this instance; else empty. */
  public Optional<Problem> problem() {
    return refusal().map(ProblemMappers::problemOf);
  }

  private Optional<Outcomes.RefusedException> refusal() {
    return watch
        .newerMigration()
        .map(
            migration ->
                new Outcomes.RefusedException(
                    new Outcomes.Status(503, "schema-newer", "Schema migrated by a newer release"),
                    "A newer release of claimq migrated the database to "
                        + migration
                        + " after this instance started: this instance serves nothing more, so"
                        + " that its older code cannot misread the new schema. Send the request"
                        + " to an instance of the newer release; nothing was done here."));
  }
}
