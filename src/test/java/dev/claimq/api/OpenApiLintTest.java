package dev.claimq.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
    if (!Files.isDirectory(LINT.resolve("node_modules"))) {
      Result ci = run(List.of("npm", "ci", "--no-audit", "--no-fund"), 300);
      assertThat(ci.exit()).as("npm ci in openapi/lint:\n" + ci.output()).isZero();
    }
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
                "../openapi.yaml"),
            120);
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
                "../openapi.yaml"),
            120);
    assertThat(redocly.exit()).as(redocly.output()).isZero();
    assertThat(redocly.output())
        .contains("Your API description is valid")
        .doesNotContain("Warning was generated")
        .doesNotContain("You have");
  }

  private record Result(int exit, String output) {}

  private static Result run(List<String> command, int timeoutSeconds)
      throws IOException, InterruptedException {
    Path output = Files.createTempFile("lint", ".txt");
    Process process =
        new ProcessBuilder(command)
            .directory(LINT.toFile())
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(String.join(" ", command) + " took over " + timeoutSeconds + " s");
    }
    String text = Files.readString(output);
    Files.delete(output);
    return new Result(process.exitValue(), text);
  }
}
