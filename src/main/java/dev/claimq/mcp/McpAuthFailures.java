package dev.claimq.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.claimq.api.Problem;
import dev.claimq.api.ProblemMappers;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.UnauthorizedException;
import io.vertx.ext.web.Router;
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
  private final ObjectMapper json;

  McpAuthFailures(ObjectMapper json) {
    this.json = json;
  }

  void answerFirst(@Observes Router router) {
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
