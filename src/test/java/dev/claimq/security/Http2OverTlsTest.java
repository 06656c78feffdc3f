package dev.claimq.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;

/**
 * Plain HTTP is HTTP/1.1 only (no h2c, whose upgrade kept one of two Authorization headers), and
 * HTTP/2 stays for TLS, where ALPN chooses it: there, too, two Authorization headers are a 401, and
 * one key is served over HTTP/2. The service gets a self-signed certificate made for the test.
 */
@QuarkusTest
@TestProfile(Http2OverTlsTest.Tls.class)
class Http2OverTlsTest {
  static final Path KEY_STORE = Path.of("target", "http2-over-tls-test.p12");
  static final String PASSWORD = "claimq-test";

  public static class Tls implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      makeKeyStore();
      return Map.of(
          "quarkus.tls.key-store.p12.path",
          KEY_STORE.toAbsolutePath().toString(),
          "quarkus.tls.key-store.p12.password",
          PASSWORD,
          "quarkus.http.test-ssl-port",
          "0",
          "quarkus.http.insecure-requests",
          "enabled");
    }
  }

  @TestHTTPResource(value = "/v1/me", tls = true)
  URI me;

  @Test
  void http2_over_tls_serves_one_key_and_refuses_two_authorization_headers() throws Exception {
    HttpClient http =
        HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).sslContext(trusting()).build();

    HttpResponse<String> one = send(http, "Bearer dev-operator-key");
    assertThat(one.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(one.statusCode()).isEqualTo(200);
    assertThat(one.body()).contains("\"dev-operator\"");

    HttpResponse<String> two = send(http, "Bearer dev-operator-key", "Bearer dev-admin-key");
    assertThat(two.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(two.statusCode()).as(two.body()).isEqualTo(401);
    assertThat(two.headers().firstValue("Content-Type")).hasValue("application/problem+json");
  }

  private HttpResponse<String> send(HttpClient http, String... authorizations) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(me);
    for (String authorization : authorizations) {
      request.header("Authorization", authorization);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** A TLS context that trusts the test's own certificate, and only it. */
  private static SSLContext trusting() throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(KEY_STORE)) {
      store.load(in, PASSWORD.toCharArray());
    }
    TrustManagerFactory trust =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(store);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, trust.getTrustManagers(), null);
    return context;
  }

  /** A new self-signed certificate for localhost, by the JDK's own keytool. */
  static void makeKeyStore() {
    try {
      Files.createDirectories(KEY_STORE.getParent());
      Files.deleteIfExists(KEY_STORE);
      Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
      Process process =
          new ProcessBuilder(
                  keytool.toString(),
                  "-genkeypair",
                  "-alias",
                  "claimq",
                  "-keyalg",
                  "EC",
                  "-groupname",
                  "secp256r1",
                  "-validity",
                  "2",
                  "-dname",
                  "CN=localhost",
                  "-ext",
                  "SAN=dns:localhost,ip:127.0.0.1",
                  "-keystore",
                  KEY_STORE.toString(),
                  "-storetype",
                  "PKCS12",
                  "-storepass",
                  PASSWORD,
                  "-keypass",
                  PASSWORD)
              .redirectErrorStream(true)
              .start();
      String output = new String(process.getInputStream().readAllBytes());
      if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
        throw new IllegalStateException("keytool failed: " + output);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot make the test's key store", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
