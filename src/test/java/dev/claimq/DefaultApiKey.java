package dev.claimq;

import io.quarkus.test.junit.callback.QuarkusTestBeforeEachCallback;
import io.quarkus.test.junit.callback.QuarkusTestMethodContext;
import io.restassured.RestAssured;

/**
 * Before every @QuarkusTest method: RestAssured calls carry the dev admin key (all roles), so tests
 * about queue behaviour need not repeat it. The role and queue rules themselves are tested in
 * SecurityTest, over a client without this default.
 */
public class DefaultApiKey implements QuarkusTestBeforeEachCallback {
  public static final String ADMIN = "dev-admin-key";

  @Override
  public void beforeEach(QuarkusTestMethodContext context) {
    RestAssured.replaceFiltersWith(
        (request, response, next) -> {
          if (!request.getHeaders().hasHeaderWithName("Authorization")) {
            request.header("Authorization", "Bearer " + ADMIN);
          }
          return next.next(request, response);
        });
  }
}
