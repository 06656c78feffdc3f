package dev.claimq;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs a tool as a real process (npm, tsc, node, bash) and keeps what it printed. */
public final class Processes {
  private Processes() {}

  public record Result(int exit, String output) {}

  /** Runs the command in the folder, with these variables added to the environment. */
  public static Result run(List<String> command, Path folder, Map<String, String> env, int seconds)
      throws IOException, InterruptedException {
    Path output = Files.createTempFile("process", ".txt");
    try {
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .directory(folder.toFile())
              .redirectErrorStream(true)
              .redirectOutput(output.toFile());
      builder.environment().putAll(env);
      Process process = builder.start();
      if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError(
            String.join(" ", command)
                + " took over "
                + seconds
                + " s:\n"
                + Files.readString(output));
      }
      return new Result(process.exitValue(), Files.readString(output));
    } finally {
      Files.deleteIfExists(output);
    }
  }

  /** npm ci in the folder, unless its node_modules is there already. */
  public static void npmCi(Path folder) throws IOException, InterruptedException {
    if (!Files.isDirectory(folder.resolve("node_modules"))) {
      Result ci = run(List.of("npm", "ci", "--no-audit", "--no-fund"), folder, Map.of(), 300);
      if (ci.exit() != 0) {
        throw new AssertionError("npm ci in " + folder + " failed:\n" + ci.output());
      }
    }
  }
}
