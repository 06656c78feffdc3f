package dev.claimq.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The reference workers' backoff, run in the worker's own runtime: a long outage must not end it.
 */
class WorkerBackoffTest {

  @Test
  void python_backoff_after_two_thousand_failures_in_a_row_is_capped_not_an_overflow()
      throws Exception {
    Process python =
        new ProcessBuilder(
                "python3",
                "-c",
                "import sys; sys.path.insert(0, 'examples/workers'); import worker;"
                    + " print(max(worker.backoff(n) for n in range(1, 2001)))")
            .redirectErrorStream(true)
            .start();
    String output = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(python.waitFor(60, TimeUnit.SECONDS)).isTrue();

    assertThat(python.exitValue()).as(output).isZero();
    assertThat(Double.parseDouble(output.strip())).isBetween(0.0, 30.0);
  }
}
