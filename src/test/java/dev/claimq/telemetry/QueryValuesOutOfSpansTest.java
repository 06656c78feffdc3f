package dev.claimq.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class QueryValuesOutOfSpansTest {
  @Test
  void every_value_goes_and_every_name_stays() {
    assertThat(QueryValuesOutOfSpans.namesOnly("q=ada%40example.com")).isEqualTo("q=REDACTED");
    assertThat(QueryValuesOutOfSpans.namesOnly("state=failed&reason=a=b&limit=5&flag&"))
        .isEqualTo("state=REDACTED&reason=REDACTED&limit=REDACTED&REDACTED&");
    assertThat(QueryValuesOutOfSpans.namesOnly("dev-admin-key")).isEqualTo("REDACTED");
  }
}
