package dev.claimq;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/** An agent's span that a test makes up: a fresh trace id and span id, sampled. */
public record AgentSpan(String traceId, String spanId) {
  public static AgentSpan next() {
    return new AgentSpan(hex(16), hex(8));
  }

  /** The W3C traceparent header the agent sends. */
  public String traceparent() {
    return "00-" + traceId + "-" + spanId + "-01";
  }

  private static String hex(int bytes) {
    byte[] random = new byte[bytes];
    ThreadLocalRandom.current().nextBytes(random);
    random[0] |= 1; // never all zeros
    return HexFormat.of().formatHex(random);
  }
}
