package dev.claimq.queue;

import java.security.SecureRandom;
import java.util.Base64;

/** Unguessable claim tokens: 256 bits from a CSPRNG, URL-safe base64. */
public final class ClaimTokens {
  private static final SecureRandom RANDOM = new SecureRandom();

  private ClaimTokens() {}

  public static String next() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}
