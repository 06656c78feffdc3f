package dev.claimq.queue;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SqlTest {

  @Test
  void named_parameters_become_positional_in_order_of_appearance() {
    Sql sql = Sql.of("UPDATE item SET a = :a WHERE id = :id AND b = :a");

    assertThat(sql.positional()).isEqualTo("UPDATE item SET a = ? WHERE id = ? AND b = ?");
    assertThat(sql.parameters()).containsExactly("a", "id", "a");
  }

  @Test
  void casts_and_colons_in_text_are_not_parameters() {
    Sql sql = Sql.of("SELECT 'null'::jsonb, 'lease expired: ' || x, :x_1 FROM t");

    assertThat(sql.positional())
        .isEqualTo("SELECT 'null'::jsonb, 'lease expired: ' || x, ? FROM t");
    assertThat(sql.parameters()).containsExactly("x_1");
  }

  @Test
  void prints_the_statement_as_written() {
    String text = "SELECT * FROM item WHERE id = :id";

    assertThat(Sql.of(text)).hasToString(text);
  }
}
