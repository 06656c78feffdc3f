package dev.claimq.api;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.claimq.api.CheckedJsonReader.Checked;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * The strict UTF-8 check under every JSON body, read directly: the hostile-input suites send their
 * bodies over HTTP, where a body arrives in one or two reads; here a read gives a few bytes at a
 * time, so characters are split between reads and the decoding loop goes round many times.
 */
class CheckedJsonReaderTest {
  private static final long LIMIT = 1 << 20;
  // One character each of 1, 2, 3 and 4 bytes of UTF-8.
  private static final String MIXED = "a\u00e9\u20ac\ud83d\ude00";

  @Test
  void a_body_many_times_the_buffer_passes_whole_with_characters_split_between_reads()
      throws IOException {
    byte[] body = json(MIXED.repeat(Checked.DISCARDED_CHARS * 3)).getBytes(UTF_8);

    assertThat(readAll(new Checked(trickling(body, 7), LIMIT))).isEqualTo(body);
  }

  @Test
  void a_byte_that_is_not_utf8_far_past_the_buffer_is_refused_at_its_offset() {
    byte[] valid = json(MIXED.repeat(Checked.DISCARDED_CHARS)).getBytes(UTF_8);
    int at = valid.length - 1; // just before the closing brace
    byte[] body = new byte[valid.length + 2];
    System.arraycopy(valid, 0, body, 0, at);
    body[at] = (byte) 0xC0; // an overlong NUL, which Jackson alone would read as U+0000
    body[at + 1] = (byte) 0x80;
    System.arraycopy(valid, at, body, at + 2, 1);

    assertThatThrownBy(() -> readAll(new Checked(trickling(body, 7), LIMIT)))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("(at byte " + at + ")");
  }

  @Test
  void a_character_cut_at_the_end_of_the_body_is_refused_where_it_begins() {
    byte[] valid = json(MIXED.repeat(Checked.DISCARDED_CHARS)).getBytes(UTF_8);
    byte[] body = new byte[valid.length + 2];
    System.arraycopy(valid, 0, body, 0, valid.length);
    body[valid.length] = (byte) 0xE2; // the first two of the three bytes of U+20AC
    body[valid.length + 1] = (byte) 0x82;

    assertThatThrownBy(() -> readAll(new Checked(trickling(body, 7), LIMIT)))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("(at byte " + valid.length + ")");
  }

  /**
   * Every body with a JSON media type goes through one: what it allocates, every request pays. Its
   * buffer of 4,096 characters alone was 8 KB, a sixth of an enqueue's allocations.
   */
  @Test
  void checking_an_enqueue_sized_body_allocates_well_under_a_buffer_of_4096_characters()
      throws IOException {
    byte[] body =
        ("{\"dedupeKey\":\"order-1234:confirmation\",\"payload\":{\"to\":\"ana@example.com\","
                + "\"subject\":\"Your order\",\"body\":\""
                + "Thank you for your order. ".repeat(8)
                + "\"},\"maxAttempts\":5}")
            .getBytes(UTF_8);
    byte[] buffer = new byte[8000]; // Jackson's own read buffer is the caller's
    readInto(new Checked(new ByteArrayInputStream(body), LIMIT), buffer); // classes loaded

    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    InputStream source = new ByteArrayInputStream(body);
    long before = threads.getCurrentThreadAllocatedBytes();
    readInto(new Checked(source, LIMIT), buffer);
    long allocated = threads.getCurrentThreadAllocatedBytes() - before;

    assertThat(allocated).isLessThan(2048);
    assertThat(body.length).as("longer than the buffer").isGreaterThan(Checked.DISCARDED_CHARS);
  }

  private static String json(String text) {
    return "{\"payload\":\"" + text + "\"}";
  }

  private static byte[] readAll(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[64];
    for (int n; (n = in.read(buffer, 0, buffer.length)) >= 0; ) {
      out.write(buffer, 0, n);
    }
    return out.toByteArray();
  }

  private static void readInto(InputStream in, byte[] buffer) throws IOException {
    while (in.read(buffer, 0, buffer.length) >= 0) {
      // the check is the point: nothing is kept
    }
  }

  /** The body, at most {@code most} bytes a read, as a slow client's chunks arrive. */
  private static InputStream trickling(byte[] body, int most) {
    return new FilterInputStream(new ByteArrayInputStream(body)) {
      @Override
      public int read(byte[] buffer, int offset, int length) throws IOException {
        return super.read(buffer, offset, Math.min(length, most));
      }
    };
  }
}
