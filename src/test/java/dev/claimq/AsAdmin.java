package dev.claimq;

import io.restassured.RestAssured;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A test that calls the service through RestAssured as the dev admin key (all roles), unless a call
 * sends an Authorization header of its own, so tests about queue behaviour need not repeat it. The
 * role and queue rules themselves are tested in SecurityTest, over a client that sends each key by
 * hand.
 */
public abstract class AsAdmin {
  public static final String ADMIN = "dev-admin-key";

  @BeforeEach
  void sendTheAdminKey() {
    RestAssured.replaceFiltersWith(
        (request, response, next) -> {
          if (!request.getHeaders().hasHeaderWithName("Authorization")) {
            request.header("Authorization", "Bearer " + ADMIN);
          }
          return next.next(request, response);
        });
  }

  @AfterEach
  void stopSendingIt() {
    RestAssured.replaceFiltersWith(List.of());
  }
}
