package dev.claimq.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SqlFileTest {
  private static final String FILE =
      """
      -- The file's own comment.

      -- name: find
      -- Why it is there.
      -- Over two lines.
      SELECT * FROM item
      WHERE id = :id AND note = 'a; b';

      -- name: touch
      UPDATE item SET updated_at = now() WHERE id = :id AND queue = :queue;
      """;

  @Test
  void blocks_are_read_with_their_comment_and_their_statement_without_the_semicolon() {
    SqlFile file = SqlFile.parse("test.sql", FILE);

    assertThat(file.blocks()).containsOnlyKeys("find", "touch");
    assertThat(file.blocks().get("find").comment()).isEqualTo("Why it is there.\nOver two lines.");
    assertThat(file.blocks().get("find").sql())
        .isEqualTo("SELECT * FROM item\nWHERE id = :id AND note = 'a; b'");
  }

  @Test
  void a_caller_must_bind_exactly_the_statements_parameters() {
    SqlFile file = SqlFile.parse("test.sql", FILE);

    assertThatThrownBy(() -> file.take("touch", "id"))
        .hasMessageContaining("parameters are [id, queue] but the code binds [id]");
    assertThatThrownBy(() -> file.take("find", "id", "queue"))
        .hasMessageContaining("parameters are [id] but the code binds [id, queue]");
    assertThat(file.take("touch", "queue", "id").parameters()).containsExactly("id", "queue");
  }

  @Test
  void a_block_no_caller_takes_is_refused() {
    SqlFile file = SqlFile.parse("test.sql", FILE);
    file.take("find", "id");

    assertThatThrownBy(file::requireAllTaken)
        .hasMessageContaining("no code takes the blocks [touch]");
  }

  @Test
  void two_statements_in_one_block_or_one_without_its_semicolon_are_refused() {
    assertThatThrownBy(() -> SqlFile.parse("t.sql", "-- name: a\nSELECT 1; SELECT 2;\n"))
        .hasMessageContaining("one statement per block");
    assertThatThrownBy(() -> SqlFile.parse("t.sql", "-- name: a\nSELECT 1\n"))
        .hasMessageContaining("does not end with ;");
  }

  @Test
  void a_parameter_can_be_written_out_for_a_tool_that_cannot_bind_it() {
    SqlFile file = SqlFile.parse("test.sql", FILE);

    assertThat(file.blocks().get("touch").with("queue", "'bench'"))
        .isEqualTo("UPDATE item SET updated_at = now() WHERE id = :id AND queue = 'bench'");
  }

  @Test
  void the_services_own_file_loads_and_every_block_is_taken_by_the_repository() {
    // Loading the class takes its statements and checks them, as the service does at start.
    assertThat(ItemRepository.class).isNotNull();
    assertThat(SqlFile.load("db/item.sql").blocks()).containsKeys("claim", "claim-next");
  }
}
