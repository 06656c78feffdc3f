package dev.claimq.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * Mints an API key and prints the configuration entry that grants it, without storing the key. Runs
 * on a bare JDK, no build needed:
 *
 * <pre>java src/main/java/dev/claimq/security/MintKey.java mailer worker emails+sms</pre>
 *
 * The service keeps only the SHA-256 of each key. A key is 256 random bits, so a fast hash is as
 * strong as a slow one here: there is no guessable password to protect against brute force.
 */
public final class MintKey {
  private MintKey() {}

  public static void main(String[] args) {
    if (args.length < 2 || args.length > 3) {
      System.err.println(
          "usage: MintKey <name> <roles, e.g. agent+worker> [queues, e.g. emails+sms; default all]");
      System.exit(2);
    }
    String key = newKey();
    String entry =
        args[0] + ":" + args[1] + ":" + (args.length == 3 ? args[2] : "*") + ":" + sha256(key);
    System.out.println("key (give it to the client; it is not stored anywhere):");
    System.out.println("  " + key);
    System.out.println("entry (add it to claimq.auth.keys / CLAIMQ_AUTH_KEYS, comma-separated):");
    System.out.println("  " + entry);
  }

  /** A new key: "cq_" and 256 random bits, URL-safe base64. */
  static String newKey() {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return "cq_" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  /** Lower-case hex SHA-256 of the key's UTF-8 bytes: what the configuration stores. */
  public static String sha256(String key) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
