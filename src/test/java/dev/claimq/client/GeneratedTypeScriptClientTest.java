package dev.claimq.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.Processes;
import dev.claimq.Processes.Result;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The typescript-fetch client that the build generates from the committed document type-checks
 * under tsc --strict together with a whole worker loop (src/test/typescript/worker-loop.ts), and
 * that loop, run by Node against the real service, gets every answer the document promises.
 */
@QuarkusTest
class GeneratedTypeScriptClientTest {
  private static final Path LOOP = Path.of("src", "test", "typescript");

  @TestHTTPResource("/")
  URI base;

  @Test
  void the_typescript_client_type_checks_strictly_and_drives_a_worker_loop() throws Exception {
    Processes.npmCi(LOOP);
    Result tsc =
        Processes.run(
            List.of("npx", "--no-install", "tsc", "-p", "tsconfig.json"), LOOP, Map.of(), 180);
    assertThat(tsc.exit()).as("tsc --strict:\n" + tsc.output()).isZero();

    WorkerLoops.runAndCheck(
        List.of("node", "target/typescript-out/src/test/typescript/worker-loop.js"),
        base,
        Map.of());
  }
}
