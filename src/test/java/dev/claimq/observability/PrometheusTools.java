package dev.claimq.observability;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/** Finds Prometheus's own programs on PATH, or fails saying how to get them. */
final class PrometheusTools {
  private PrometheusTools() {}

  /** The program (promtool, prometheus) on PATH; a missing one fails the test with the fix. */
  static String require(String program) {
    for (String folder : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path candidate = Path.of(folder, program);
      if (Files.isExecutable(candidate)) {
        return candidate.toString();
      }
    }
    throw new AssertionError(
        program
            + " is not on PATH. It comes with Debian's prometheus package:"
            + " apt-get install --no-install-recommends prometheus, as root"
            + " (.ci/run installs it in CI).");
  }
}
