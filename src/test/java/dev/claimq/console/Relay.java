package dev.claimq.console;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A reverse proxy between the browser and the service, so that a test decides what becomes of one
 * kind of request (a method and a path): held a while before it goes on, as on a slow network, or
 * passed to the service, which acts on it, and then its answer lost or replaced by a 503 or by a
 * proxy's HTML error page. Every other request goes through as it came. The console calls the API
 * relative to its own page, so opened through the relay, all of its calls go through it.
 */
final class Relay implements AutoCloseable {
  /** What happens to a request after the service answered it. */
  enum Fate {
    /** Answered as the service answered, after a delay. */
    HELD,
    /** The connection is closed with no answer: the browser sees a network error. */
    LOST,
    /** A 503 in place of the service's answer, as an overloaded proxy would send. */
    UNAVAILABLE,
    /** A 502 with an HTML page in place of the service's answer, as a failing gateway sends. */
    BAD_GATEWAY
  }

  /** The page a gateway sends with its 502: markup, not a problem for the operator to read. */
  static final String BAD_GATEWAY_PAGE =
      "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
          + "</h1></center><hr><center>proxy</center></body></html>";

  private static final Set<String> NOT_RELAYED =
      Set.of("connection", "content-length", "host", "upgrade", "expect", "transfer-encoding");
  private static final Duration HOLD = Duration.ofMillis(800);

  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final HttpClient client = HttpClient.newHttpClient();
  private final URI target;
  private final Map<String, Fate> fates = new ConcurrentHashMap<>();
  private final Set<String> once = ConcurrentHashMap.newKeySet();
  private final Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> answered = new ConcurrentHashMap<>();
  private volatile boolean weakTags;

  Relay(URI target) {
    this.target = target;
    try {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.setExecutor(threads);
    server.createContext("/", this::relay);
    server.start();
  }

  /** The relay's own root: a browser opened on it reaches the service only through it. */
  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
  }

  /** From now on, every such request has this fate. */
  void on(String method, String path, Fate fate) {
    fates.put(method + " " + path, fate);
  }

  /**
   * From now on, every ETag passed on is marked weak (W/"7"), as a proxy that compresses answers
   * marks them (nginx with gzip on).
   */
  void weakenEntityTags() {
    weakTags = true;
  }

  /** The next such request has this fate; the ones after it go through as they came. */
  void next(String method, String path, Fate fate) {
    on(method, path, fate);
    once.add(method + " " + path);
  }

  /** How many such requests reached the relay so far. */
  int seen(String method, String path) {
    return seen.getOrDefault(method + " " + path, new AtomicInteger()).get();
  }

  /** How many such requests the relay has finished with (answered, or their answer lost). */
  int finished(String method, String path) {
    return answered.getOrDefault(method + " " + path, new AtomicInteger()).get();
  }

  private void relay(HttpExchange exchange) throws IOException {
    String request = exchange.getRequestMethod() + " " + exchange.getRequestURI().getRawPath();
    seen.computeIfAbsent(request, r -> new AtomicInteger()).incrementAndGet();
    try (exchange) {
      Fate fate = once.remove(request) ? fates.remove(request) : fates.get(request);
      if (fate == Fate.HELD) {
        Thread.sleep(HOLD.toMillis());
      }
      HttpResponse<byte[]> response = forward(exchange);
      if (fate == Fate.LOST) {
        return; // closed with no answer sent
      }
      if (fate == Fate.UNAVAILABLE) {
        answer(exchange, 503, "text/plain", "Service Unavailable".getBytes(StandardCharsets.UTF_8));
        return;
      }
      if (fate == Fate.BAD_GATEWAY) {
        answer(exchange, 502, "text/html", BAD_GATEWAY_PAGE.getBytes(StandardCharsets.UTF_8));
        return;
      }
      response
          .headers()
          .map()
          .forEach(
              (name, values) -> {
                if (weakTags && name.equalsIgnoreCase("ETag")) {
                  values =
                      values.stream().map(tag -> tag.startsWith("W/") ? tag : "W/" + tag).toList();
                }
                if (!NOT_RELAYED.contains(name.toLowerCase()) && !name.startsWith(":")) {
                  exchange.getResponseHeaders().put(name, values);
                }
              });
      answer(exchange, response.statusCode(), null, response.body());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      answered.computeIfAbsent(request, r -> new AtomicInteger()).incrementAndGet();
    }
  }

  private HttpResponse<byte[]> forward(HttpExchange exchange)
      throws IOException, InterruptedException {
    byte[] body;
    try (InputStream in = exchange.getRequestBody()) {
      body = in.readAllBytes();
    }
    HttpRequest.Builder forwarded =
        HttpRequest.newBuilder(
                URI.create(target.toString().replaceFirst("/$", "") + exchange.getRequestURI()))
            .method(
                exchange.getRequestMethod(),
                body.length == 0
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofByteArray(body));
    exchange
        .getRequestHeaders()
        .forEach(
            (name, values) -> {
              if (!NOT_RELAYED.contains(name.toLowerCase())) {
                values.forEach(value -> forwarded.header(name, value));
              }
            });
    return client.send(forwarded.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  private static void answer(HttpExchange exchange, int status, String type, byte[] body)
      throws IOException {
    if (type != null) {
      exchange.getResponseHeaders().set("Content-Type", type);
    }
    boolean none = body.length == 0 || status == 204 || status == 304;
    exchange.sendResponseHeaders(status, none ? -1 : body.length);
    if (!none) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
