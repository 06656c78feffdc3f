package dev.claimq.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SqlTest {

  @Test
  void named_parameters_become_positional_in_order_of_appearance() {
    Sql sql = Sql.of("UPDATE item SET a = :a WHERE id = :id AND b = :a");

    assertThat(sql.positional()).isEqualTo("UPDATE item SET a = ? WHERE id = ? AND b = ?");
    assertThat(sql.parameters()).containsExactly("a", "id", "a");
  }

  @Test
  void colons_in_casts_strings_identifiers_comments_and_dollar_quotes_are_not_parameters() {
    String text =
        """
        SELECT 'null'::jsonb, 'lease expired: ' || x, 'it''s :no', E'\\' :no', "col:no",
               $$ :no $$, $tag$ :no $tag$, :x_1 -- a comment with :no
        /* a block /* nested :no */ still :no */ FROM t WHERE y = :y""";

    Sql sql = Sql.of(text);

    assertThat(sql.parameters()).containsExactly("x_1", "y");
    assertThat(sql.positional()).contains("'lease expired: '", "$tag$ :no $tag$", "= ?");
  }

  @Test
  void an_unterminated_quote_is_refused_rather_than_guessed() {
    assertThatThrownBy(() -> Sql.of("SELECT 'open :a"))
        .hasMessageContaining("unterminated quote or comment at line 1");
  }

  @Test
  void binding_a_name_the_statement_does_not_have_is_refused() {
    Sql sql = Sql.of("SELECT * FROM item WHERE id = :id");

    assertThatThrownBy(() -> sql.on((javax.sql.DataSource) null).set("idd", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no :idd");
  }

  @Test
  void a_statement_run_with_a_parameter_unbound_is_refused_before_it_reaches_the_database() {
    Sql sql = Sql.of("SELECT * FROM item WHERE id = :id AND queue = :queue");

    // No data source: the refusal comes before a connection is asked for.
    assertThatThrownBy(() -> sql.on((javax.sql.DataSource) null).set("id", 1).update())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no value for :queue");
  }

  @Test
  void prints_the_statement_as_written() {
    String text = "SELECT * FROM item WHERE id = :id";

    assertThat(Sql.of(text)).hasToString(text);
  }
}
