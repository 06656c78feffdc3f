package dev.claimq.health;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import dev.claimq.longpoll.ClaimableListener;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * Health tells the truth: readiness is the database, liveness never asks it, and the named checks
 * say what is degraded and why.
 */
@QuarkusTest
class HealthTest {
  @Inject DataSource dataSource;
  @Inject ServiceChecks checks;

  @ConfigProperty(name = "claimq.schema")
  String schema;

  @Test
  void readiness_is_the_database_and_liveness_asks_nothing_of_it() {
    given()
        .get("/q/health/ready")
        .then()
        .statusCode(200)
        .body("checks.name", org.hamcrest.Matchers.hasItem("Database connections health check"))
        // Read-only (DOWN) is the fault suite's to cause: it needs a cluster of its own.
        .body("checks.find { it.name == 'database-writable' }.status", equalTo("UP"));
    JsonPath live = given().get("/q/health/live").then().statusCode(200).extract().jsonPath();
    assertThat(live.getList("checks.name", String.class)).containsExactly("process");
  }

  @Test
  void the_checks_are_read_with_get_and_other_methods_are_a_405_naming_it() {
    // SmallRye Health answered these with 200 and the checks, and OPTIONS without Allow.
    for (String path : new String[] {"/q/health", "/q/health/live", "/q/health/ready"}) {
      for (String method : new String[] {"POST", "DELETE", "PUT"}) {
        given()
            .request(method, path)
            .then()
            .statusCode(405)
            .header("Allow", "GET, HEAD, OPTIONS")
            .contentType("application/problem+json")
            .body("detail", org.hamcrest.Matchers.containsString(method + " is not taken here"));
      }
      given().options(path).then().statusCode(200).header("Allow", "GET, HEAD, OPTIONS");
      given().head(path).then().statusCode(200);
    }
  }

  @Test
  void the_named_checks_say_all_is_well_with_a_reason_each() {
    JsonPath well = awaitWell("enqueue-listener", "UP");
    assertThat(well.getList("checks.name", String.class))
        .containsExactlyInAnyOrder(
            "enqueue-listener", "lease-reaper", "database-disk", "schema-migrations");
    assertThat(reason(well, "schema-migrations")).startsWith("at version ").endsWith("the latest");
    assertThat(reason(well, "lease-reaper")).matches("ran \\d+\\.\\d{3} s ago");
    assertThat(reason(well, "enqueue-listener")).isEqualTo("listening");
    assertThat(reason(well, "database-disk"))
        .isEqualTo("no write failed for want of disk space in the last minute");
  }

  @Test
  void a_listener_that_lost_its_connection_is_degraded_until_it_is_back() throws Exception {
    awaitWell("enqueue-listener", "UP");
    try (Connection connection = dataSource.getConnection();
        PreparedStatement kill =
            connection.prepareStatement(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE application_name = ?")) {
      kill.setString(1, ClaimableListener.listenerName("claimq." + schema));
      try (ResultSet ended = kill.executeQuery()) {
        ended.next();
        assertThat(ended.getInt(1)).as("listener sessions ended").isEqualTo(1);
      }
    }
    // It reconnects within a second, so the DOWN may be short; the UP after it must come.
    JsonPath down = awaitWell("enqueue-listener", "DOWN");
    assertThat(reason(down, "enqueue-listener"))
        .startsWith("lost its connection")
        .endsWith("parked claims wake only on the fallback poll");
    given().get("/q/health/ready").then().statusCode(200); // still serving
    awaitWell("enqueue-listener", "UP");
  }

  @Test
  void a_schema_behind_its_migrations_is_degraded_and_says_how_far() throws Exception {
    String behind = "claimq_health_" + UUID.randomUUID().toString().substring(0, 8);
    Flyway.configure()
        .dataSource(dataSource)
        .schemas(behind)
        .defaultSchema(behind)
        .createSchemas(true)
        .target("5")
        .load()
        .migrate();
    Flyway current =
        Flyway.configure().dataSource(dataSource).schemas(behind).defaultSchema(behind).load();
    try {
      HealthCheckResponse response = checks.migrations(current).call();

      assertThat(response.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
      assertThat(response.getData().orElseThrow().get("reason").toString())
          .startsWith("at version 5, ")
          .contains("migration(s) not applied, up to ");
    } finally {
      try (Connection connection = dataSource.getConnection()) {
        connection.createStatement().execute("DROP SCHEMA " + behind + " CASCADE");
      }
    }
  }

  @Test
  void the_reaper_is_late_after_three_intervals_without_a_run() {
    Duration second = Duration.ofSeconds(1);

    assertThat(ServiceChecks.reaperLate(Optional.empty(), Duration.ofSeconds(3), second)).isEmpty();
    assertThat(ServiceChecks.reaperLate(Optional.empty(), Duration.ofSeconds(4), second))
        .hasValue(
            "has not run since the start, 4.000 s ago, over 3 intervals of 1.000 s: expired"
                + " claims are not being released");
    Duration sinceStart = Duration.ofSeconds(60);
    assertThat(ServiceChecks.reaperLate(Optional.of(Duration.ofSeconds(3)), sinceStart, second))
        .isEmpty();
    assertThat(ServiceChecks.reaperLate(Optional.of(Duration.ofMillis(3500)), sinceStart, second))
        .hasValue(
            "last ran 3.500 s ago, over 3 intervals of 1.000 s: expired claims are not being"
                + " released");
  }

  private static JsonPath awaitWell(String check, String status) {
    Instant deadline = Instant.now().plusSeconds(10);
    JsonPath well;
    do {
      well = given().get("/q/health/well").then().extract().jsonPath();
      if (status.equals(well.getString("checks.find { it.name == '" + check + "' }.status"))) {
        return well;
      }
    } while (Instant.now().isBefore(deadline));
    given()
        .get("/q/health/well")
        .then()
        .body("checks.find { it.name == '" + check + "' }.status", equalTo(status));
    return well;
  }

  private static String reason(JsonPath well, String check) {
    return well.getString("checks.find { it.name == '" + check + "' }.data.reason");
  }
}
