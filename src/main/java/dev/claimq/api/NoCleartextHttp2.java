package dev.claimq.api;

import io.quarkus.vertx.http.HttpServerOptionsCustomizer;
import io.vertx.core.http.HttpServerOptions;
import jakarta.inject.Singleton;

/**
 * Plain HTTP is served as HTTP/1.1 only, without h2c (HTTP/2 in clear text). An h2c upgrade turns
 * the HTTP/1.1 request that asks for it into an HTTP/2 stream, and that conversion kept one of two
 * Authorization headers, which must be refused with 401 rather than acted on with either key.
 * Clients that ask for the upgrade (Java's HttpClient does by default) are answered in HTTP/1.1, as
 * the upgrade allows. HTTP/2 over TLS, chosen by ALPN, is not affected.
 */
@Singleton
public class NoCleartextHttp2 implements HttpServerOptionsCustomizer {
  @Override
  public void customizeHttpServer(HttpServerOptions options) {
    options.setHttp2ClearTextEnabled(false);
  }
}
