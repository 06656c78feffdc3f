package dev.claimq.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Where a refusal says the unstorable character is, it counts characters, as the limits do. */
class StorableTest {
  private static final String EMOJI = "\uD83D\uDE00"; // one character, two UTF-16 units

  @Test
  void a_nul_after_characters_outside_the_bmp_is_placed_by_characters() {
    assertThat(Storable.whyNotText(EMOJI + EMOJI + "\u0000", false))
        .isEqualTo("contains U+0000 (NUL) at character 2, which cannot be stored");
  }

  @Test
  void a_lone_surrogate_after_characters_outside_the_bmp_is_placed_by_characters() {
    assertThat(Storable.whyNotText(EMOJI + "a\uDE00", false))
        .isEqualTo(
            "is not valid Unicode: a lone surrogate U+DE00 at character 2 (send the character"
                + " itself, or its escaped surrogate pair)");
    assertThat(Storable.whyNotText(EMOJI + "\uD83D", false))
        .startsWith("is not valid Unicode: a lone surrogate U+D83D at character 1 ");
  }

  @Test
  void text_of_whole_characters_is_storable() {
    assertThat(Storable.whyNotText(EMOJI.repeat(3) + "a", false)).isNull();
  }
}
