package dev.claimq.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.Processes;
import dev.claimq.Processes.Result;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The committed OpenAPI document passes Spectral's and Redocly's OpenAPI rules with no error and no
 * warning, but for the few rules turned off, each with its reason, in openapi/lint. Both tools are
 * pinned in openapi/lint/package-lock.json and installed from it on first use. OpenApiDocumentTest
 * makes sure the committed document is the one the service serves.
 */
class OpenApiLintTest {
  private static final Path LINT = Path.of("openapi", "lint");

  @BeforeAll
  static void install() throws Exception {
    Processes.npmCi(LINT);
  }

  @Test
  void spectral_finds_no_error_or_warning() throws Exception {
    Result spectral =
        run(
            List.of(
                "npx",
                "--no-install",
                "spectral",
                "lint",
                "--fail-severity=warn",
                "--ruleset",
                ".spectral.yaml",
                "../openapi.yaml"));
    assertThat(spectral.exit()).as(spectral.output()).isZero();
    assertThat(spectral.output()).contains("No results with a severity of 'warn' or higher");
  }

  @Test
  void redocly_finds_no_error_or_warning() throws Exception {
    Result redocly =
        run(
            List.of(
                "npx",
                "--no-install",
                "redocly",
                "lint",
                "--config",
                "redocly.yaml",
                "--max-problems",
                "100",
                "../openapi.yaml"));
    assertThat(redocly.exit()).as(redocly.output()).isZero();
    assertThat(redocly.output())
        .contains("Your API description is valid")
        .doesNotContain("Warning was generated")
        .doesNotContain("You have");
  }

  private static Result run(List<String> command) throws Exception {
    return Processes.run(command, LINT, Map.of(), 120);
  }
}
