package dev.claimq.client;

import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.Processes;
import dev.claimq.Processes.Result;
import java.net.URI;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs a worker loop written against a generated client (src/test/typescript, src/test/python) on a
 * queue of its own, and asserts that every step answered as the document says.
 */
final class WorkerLoops {
  private WorkerLoops() {}

  static void runAndCheck(List<String> command, URI base, Map<String, String> env)
      throws Exception {
    Map<String, String> all = new HashMap<>(env);
    all.put("CLAIMQ_URL", base.toString().replaceAll("/$", ""));
    all.put("CLAIMQ_QUEUE", uniqueQueue("client-loop"));

    Result loop = Processes.run(command, Path.of("."), all, 120);

    assertThat(loop.exit()).as(loop.output()).isZero();
    assertThat(loop.output())
        .doesNotContain("not as documented")
        .contains("ok a lost claim by id is a quiet 204")
        .contains("ok a stale complete is 409")
        .contains("ok retry makes it pending");
  }
}
