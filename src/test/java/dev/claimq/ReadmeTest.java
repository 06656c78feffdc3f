package dev.claimq;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's walk-through is documentation that must run as written. Its shell blocks fenced as
 * {@code ```sh tested} run here as a real {@code bash -euo pipefail} process against the service,
 * all in one shell and in README order, as a reader pastes them into one terminal. The test sets
 * only {@code CLAIMQ_URL} (the random test port) and {@code CLAIMQ_QUEUE} (a queue no other test
 * uses), which the first block defaults to the dev service and {@code emails}; it never changes a
 * command.
 *
 * <p>Each curl in those blocks prints its status on a line of its own ({@code -w '%{http_code}\n'})
 * and ends with a comment promising it ({@code # 201}): block by block, the statuses printed must
 * be the statuses promised, in order, one per curl. Any other block that runs curl fails the test,
 * so that no example talks to the service untested. A comment above the walk-through in the README
 * says the same to whoever edits it.
 */
@QuarkusTest
class ReadmeTest extends AsAdmin {
  private static final Path README = Path.of("README.md");
  private static final Path WORK = Path.of("target", "readme");
  private static final Pattern FENCE = Pattern.compile("^```\\s*(\\S*)\\s*(.*?)\\s*$");
  private static final String TESTED = "tested";

  /** A comment after a command, beginning with a status: {@code ... # 204}. */
  private static final Pattern PROMISE = Pattern.compile("\\S\\s+#\\s+([1-5]\\d\\d)(?!\\d)");

  /** A line the blocks print that is a status and nothing else. */
  private static final Pattern STATUS = Pattern.compile("[1-5]\\d\\d|000");

  private static final Pattern CURL = Pattern.compile("(^|[\\s(|;&])curl\\s");
  private static final Pattern COMMENT = Pattern.compile("\\s#(\\s|$)");
  private static final String SEPARATOR = "::readme-block ";

  @TestHTTPResource("/")
  URI base;

  /** A fenced block: the README line of its opening fence, its info string, and its lines. */
  private record Block(int line, String language, String info, List<String> lines) {
    boolean tested() {
      return List.of("sh", "bash").contains(language) && info.equals(TESTED);
    }

    boolean runsCurl() {
      return lines.stream().map(ReadmeTest::code).anyMatch(l -> CURL.matcher(l).find());
    }
  }

  /** A status the README promises, with its line. */
  private record Promise(int line, String status) {}

  @Test
  void the_walk_through_answers_the_statuses_its_comments_promise() throws Exception {
    List<Block> blocks = blocks(Files.readAllLines(README, StandardCharsets.UTF_8));
    List<Block> tested = blocks.stream().filter(Block::tested).toList();
    assertThat(tested).as("```sh tested blocks in the README").isNotEmpty();
    assertThat(
            blocks.stream()
                .filter(b -> !b.tested() && b.runsCurl())
                .map(b -> "README line " + b.line()))
        .as(
            "blocks that run curl but are not fenced as ```sh tested (make them run as written,"
                + " with their statuses, and fence them so)")
        .isEmpty();

    Map<Block, List<Promise>> promised = new LinkedHashMap<>();
    List<String> wrong = new ArrayList<>();
    for (Block block : tested) {
      List<Promise> promises = promises(block);
      promised.put(block, promises);
      long curls = block.lines().stream().filter(l -> CURL.matcher(code(l)).find()).count();
      if (curls != promises.size()) {
        wrong.add(
            "block at README line "
                + block.line()
                + ": "
                + curls
                + " lines that run curl but "
                + promises.size()
                + " status comments (end every call with one, e.g. # 200)");
      }
    }

    Run run = run(tested);
    Map<Integer, List<String>> printed = statuses(run.output());
    for (Map.Entry<Block, List<Promise>> entry : promised.entrySet()) {
      int line = entry.getKey().line();
      List<Promise> promises = entry.getValue();
      List<String> got = printed.getOrDefault(line, List.of());
      for (int i = 0; i < Math.max(promises.size(), got.size()); i++) {
        String expected = i < promises.size() ? promises.get(i).status() : "nothing";
        String actual = i < got.size() ? got.get(i) : "nothing (the block stopped)";
        if (!expected.equals(actual)) {
          int at = i < promises.size() ? promises.get(i).line() : line;
          wrong.add("README line " + at + ": promises " + expected + ", printed " + actual);
        }
      }
    }
    assertThat(wrong).as("the blocks' output:%n%s", run.output()).isEmpty();
    assertThat(run.exitCode()).as("exit status; the blocks' output:%n%s", run.output()).isZero();
  }

  private record Run(int exitCode, String output) {}

  /** Runs the blocks in one bash, each after a line that names its README line. */
  private Run run(List<Block> blocks) throws IOException, InterruptedException {
    Files.createDirectories(WORK);
    StringBuilder script = new StringBuilder();
    for (Block block : blocks) {
      script.append("echo '").append(SEPARATOR).append(block.line()).append("'\n");
      block.lines().forEach(l -> script.append(l).append('\n'));
    }
    Path file = WORK.resolve("walk-through.sh").toAbsolutePath();
    Path log = WORK.resolve("walk-through.log").toAbsolutePath();
    Files.writeString(file, script);
    ProcessBuilder bash =
        new ProcessBuilder("bash", "-euo", "pipefail", file.toString())
            .directory(WORK.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    bash.environment().put("CLAIMQ_URL", base.toString().replaceAll("/$", ""));
    bash.environment().put("CLAIMQ_QUEUE", Api.uniqueQueue("readme"));
    Process process = bash.start();
    try {
      assertThat(process.waitFor(60, TimeUnit.SECONDS))
          .as("the blocks finished within 60 s; their output:%n%s", Files.readString(log))
          .isTrue();
    } finally {
      process.destroyForcibly();
    }
    return new Run(process.exitValue(), Files.readString(log));
  }

  /** The statuses printed, by the README line of the block that printed them. */
  private static Map<Integer, List<String>> statuses(String output) {
    Map<Integer, List<String>> printed = new LinkedHashMap<>();
    List<String> current = null;
    for (String raw : output.split("\n")) {
      String line = raw.strip();
      if (line.startsWith(SEPARATOR)) {
        current = new ArrayList<>();
        printed.put(Integer.parseInt(line.substring(SEPARATOR.length())), current);
      } else if (current != null && STATUS.matcher(line).matches()) {
        current.add(line);
      }
    }
    return printed;
  }

  private static List<Promise> promises(Block block) {
    List<Promise> promises = new ArrayList<>();
    for (int i = 0; i < block.lines().size(); i++) {
      Matcher m = PROMISE.matcher(block.lines().get(i));
      if (m.find()) {
        promises.add(new Promise(block.line() + 1 + i, m.group(1)));
      }
    }
    return promises;
  }

  /** A line without its comment, roughly: the shell text before a {@code #} that starts a word. */
  private static String code(String line) {
    String trimmed = line.strip();
    if (trimmed.startsWith("#")) {
      return "";
    }
    Matcher m = COMMENT.matcher(line);
    return m.find() ? line.substring(0, m.start()) : line;
  }

  private static List<Block> blocks(List<String> readme) {
    List<Block> blocks = new ArrayList<>();
    for (int i = 0; i < readme.size(); i++) {
      Matcher open = FENCE.matcher(readme.get(i));
      if (!open.matches()) {
        continue;
      }
      int start = i;
      List<String> lines = new ArrayList<>();
      while (++i < readme.size() && !readme.get(i).strip().equals("```")) {
        lines.add(readme.get(i));
      }
      blocks.add(new Block(start + 1, open.group(1), open.group(2), lines));
    }
    return blocks;
  }
}
