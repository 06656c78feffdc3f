package dev.claimq;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packages' floors, as the README's layout paragraph draws them: each uses only the packages
 * below it, so no arrow runs back up and there is no circle. Read from the sources (imports and
 * qualified names alike); plain JUnit.
 */
class LayersTest {
  private static final Path MAIN = Path.of("src", "main", "java", "dev", "claimq");
  private static final Pattern USE = Pattern.compile("\\bdev\\.claimq\\.([a-z]+)\\.");

  private static final Map<String, Set<String>> MAY_USE =
      Map.ofEntries(
          Map.entry("mcp", Set.of("api", "config")),
          Map.entry("api", Set.of("longpoll", "queue", "telemetry", "store", "security", "config")),
          Map.entry("longpoll", Set.of("queue", "telemetry", "store", "config")),
          Map.entry("queue", Set.of("telemetry", "store", "policy", "config")),
          Map.entry("telemetry", Set.of("store", "config")),
          Map.entry("store", Set.of("config")),
          Map.entry("policy", Set.of()),
          Map.entry("maintenance", Set.of("telemetry", "store", "config")),
          Map.entry("health", Set.of("longpoll", "maintenance", "store", "config")),
          Map.entry("security", Set.of("config")),
          Map.entry("config", Set.of()));

  @Test
  void each_package_uses_only_the_packages_below_it() throws IOException {
    List<String> upward = new ArrayList<>();
    try (Stream<Path> files = Files.walk(MAIN)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        String from = MAIN.relativize(file).getName(0).toString();
        assertThat(MAY_USE).as("a floor for package %s", from).containsKey(from);
        Matcher use = USE.matcher(Files.readString(file));
        while (use.find()) {
          String to = use.group(1);
          if (!to.equals(from) && !MAY_USE.get(from).contains(to)) {
            upward.add(MAIN.relativize(file) + " uses " + to);
          }
        }
      }
    }
    assertThat(upward).isEmpty();
  }
}
