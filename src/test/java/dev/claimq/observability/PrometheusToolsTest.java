package dev.claimq.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PrometheusToolsTest {

  @Test
  void a_missing_program_fails_the_test_saying_which_package_brings_it() {
    assertThatThrownBy(() -> PrometheusTools.require("promtool-that-is-not-there"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("promtool-that-is-not-there is not on PATH")
        .hasMessageContaining("Debian's prometheus package")
        .hasMessageContaining("apt-get install");
  }

  @Test
  void a_program_on_the_path_is_found() {
    assertThat(PrometheusTools.require("sh")).endsWith("/sh");
  }
}
