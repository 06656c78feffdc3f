package dev.claimq.api;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.concurrent.Callable;

/**
 * Runs a use case (its statements) on a worker thread, for an endpoint that does not block.
 *
 * <p>RESTEasy Reactive reads the body of a blocking endpoint on its worker thread with blocking
 * reads, each a hand-off to the I/O thread and back: for the few hundred bytes of JSON a worker or
 * an agent sends, that cost more CPU than everything else in the request (docs/profile.md). An
 * endpoint that does not block has its body read, parsed and validated on the I/O thread before it
 * runs. So the endpoints with a body check their input there, call the use case through this
 * (Vert.x's executeBlocking, in the request's own context: its log fields, request scope and trace
 * go along), and have their answer written from the I/O thread, where it resumes.
 */
final class WorkerThread {
  private WorkerThread() {}

  static <T> Uni<T> call(Callable<T> useCase) {
    Context context = Vertx.currentContext();
    if (context == null) { // not in a request: nothing to hand back to
      return Uni.createFrom()
          .emitter(
              emitter -> {
                try {
                  emitter.complete(useCase.call());
                } catch (Exception e) {
                  emitter.fail(e);
                }
              });
    }
    return Uni.createFrom()
        .completionStage(() -> context.executeBlocking(useCase, false).toCompletionStage());
  }
}
