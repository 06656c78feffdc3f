package dev.claimq.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * A process's wall clock set an hour ahead with Debian's libfaketime (package {@code faketime}),
 * preloaded into it: every time the process reads, and nothing else on the machine.
 */
final class Skew {
  /** libfaketime's relative form: the real clock plus an hour, running at the real speed. */
  static final String AHEAD = "+1h";

  private Skew() {}

  /** The multi-threaded libfaketime of the installed package, wherever the platform keeps it. */
  static Path library() throws IOException {
    try (Stream<Path> dirs = Files.list(Path.of("/usr/lib"))) {
      return dirs.map(d -> d.resolve("faketime").resolve("libfaketimeMT.so.1"))
          .filter(Files::isReadable)
          .findFirst()
          .orElseThrow(
              () ->
                  new IOException(
                      "libfaketimeMT.so.1 is not under /usr/lib/*/faketime: install Debian's"
                          + " faketime package (.ci/run does)"));
    }
  }

  /**
   * Proves the instance's clock is {@code seconds} ahead, from its own metrics: the start time it
   * reports, less the skew, must fall between {@code before} and {@code after} (real clock, ms).
   */
  static void expectAhead(String url, long before, long after, long seconds, History history)
      throws Exception {
    double reported = FaultHarness.metric(url, "process_start_time_seconds");
    double real = reported - seconds;
    System.out.printf(
        "faults: skew: %s says it started at %.0f, %.0f s from the real clock's now%n",
        url, reported, reported - after / 1000.0);
    if (real < before / 1000.0 - 2 || real > after / 1000.0 + 2) {
      history.violation(
          String.format(
              "%s reports its start at %.0f; expected a clock %d s ahead of the real one, which"
                  + " put the start between %d and %d",
              url, reported, seconds, before / 1000 + seconds, after / 1000 + seconds));
    }
  }
}
