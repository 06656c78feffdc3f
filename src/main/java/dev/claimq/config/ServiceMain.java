package dev.claimq.config;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;
import java.util.Locale;

/**
 * Starts the service in one locale, whatever the machine's. claimq speaks English with plain
 * digits, and its libraries compare protocol words with the default locale's case rules: on a
 * Turkish JVM, RESTEasy lowercased "APPLICATION/JSON" to "applıcatıon/json" and refused it, and on
 * an Arabic one, numbers in an MCP tool's schema were written as ١٠٠, which no client parses.
 */
@QuarkusMain
public final class ServiceMain {
  public static void main(String... args) {
    Locale.setDefault(Locale.ROOT);
    Quarkus.run(args);
  }
}
