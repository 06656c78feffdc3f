package dev.claimq.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.api.Problem;
import dev.claimq.api.ProblemMappers;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.UnauthorizedException;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.vertx.http.runtime.security.QuarkusHttpUser;
import io.smallrye.mutiny.Uni;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * A missing or unknown key on /mcp is answered as the REST API answers it: 401 with the challenge
 * and a problem+json body. The MCP extension's own answer to it reads the request's JSON-RPC id as
 * a number, which fails (an ERROR, and no answer) for a body that is no JSON or an id that is a
 * string, and names the exception's class; so this handler goes first.
 */
@ApplicationScoped
public class McpAuthFailures {
  private static final int BEFORE_AUTHORIZATION = -150;

  private final ObjectMapper json;

  McpAuthFailures(ObjectMapper json) {
    this.json = json;
  }

  /** A request without a key fails as the REST API's does, to be answered by the handler below. */
  private void refuseAnonymous(RoutingContext context) {
    Uni<SecurityIdentity> identity = context.get(QuarkusHttpUser.DEFERRED_IDENTITY_KEY);
    if (identity == null) {
      context.next();
      return;
    }
    identity
        .subscribe()
        .with(
            found -> {
              if (found.isAnonymous()) {
                context.fail(new UnauthorizedException());
              } else {
                context.next();
              }
            },
            failure -> {
              // An unknown key: Quarkus fails the request itself as the identity fails, and the
              // handler below has answered it already.
              if (!context.failed() && !context.response().headWritten()) {
                context.fail(failure);
              }
            });
  }

  void answerFirst(@Observes Router router) {
    router
        .route("/mcp*")
        // Between authentication (-200) and the HTTP permission's check (-100), which would answer
        // a request without a key with the mechanism's bare challenge: no body at all.
        .order(BEFORE_AUTHORIZATION)
        .handler(this::refuseAnonymous);
    router
        .route("/mcp*")
        .order(Integer.MIN_VALUE)
        .failureHandler(
            context -> {
              Throwable failure = context.failure();
              if (!(failure instanceof AuthenticationFailedException
                  || failure instanceof UnauthorizedException)) {
                context.next();
                return;
              }
              Problem problem = ProblemMappers.problemOf(failure);
              String body;
              try {
                body = json.writeValueAsString(problem);
              } catch (JsonProcessingException e) {
                throw new IllegalStateException(e); // a record of strings always writes
              }
              context
                  .response()
                  .setStatusCode(problem.status())
                  .putHeader("WWW-Authenticate", "Bearer realm=\"claimq\"")
                  .putHeader("Content-Type", Problem.MEDIA_TYPE)
                  .end(body);
            });
  }
}
