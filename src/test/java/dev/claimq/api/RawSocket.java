package dev.claimq.api;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One request written byte for byte on its own connection, and its one response read back: for what
 * no HTTP client library would send as it is.
 */
final class RawSocket {
  private RawSocket() {}

  /** A response as it came: its status line, headers (names lowercased) and body as UTF-8. */
  record Raw(String statusLine, Map<String, String> headers, String body) {
    int status() {
      return Integer.parseInt(statusLine.substring(9, 12));
    }

    String header(String name) {
      return headers.getOrDefault(name, "");
    }
  }

  /**
   * Writes the request as it is, each later part after a pause, then reads one response (until its
   * end or the server's close).
   */
  static Raw send(URL base, byte[] request, byte[]... later)
      throws IOException, InterruptedException {
    try (Socket socket = new Socket(base.getHost(), base.getPort())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      try {
        out.write(request);
        out.flush();
        for (byte[] part : later) {
          Thread.sleep(300);
          out.write(part);
          out.flush();
        }
      } catch (SocketException refusedMidway) {
        // The server may answer and close before it has read everything; read what it said.
      }
      return read(socket.getInputStream());
    }
  }

  /** Reads one response (until its end or the server's close). */
  static Raw read(InputStream in) throws IOException {
    String statusLine = line(in);
    Map<String, String> headers = new LinkedHashMap<>();
    for (String header = line(in); !header.isEmpty(); header = line(in)) {
      int colon = header.indexOf(':');
      headers.put(
          header.substring(0, colon).strip().toLowerCase(Locale.ROOT),
          header.substring(colon + 1).strip());
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (headers.containsKey("content-length")) {
      body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
    } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      for (int size = Integer.parseInt(line(in).strip(), 16);
          size > 0;
          size = Integer.parseInt(line(in).strip(), 16)) {
        body.write(in.readNBytes(size));
        line(in);
      }
    } else {
      body.write(in.readAllBytes());
    }
    return new Raw(statusLine, headers, body.toString(StandardCharsets.UTF_8));
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int b = in.read(); b != '\n'; b = in.read()) {
      if (b < 0) {
        return line.toString(); // the server closed the connection
      }
      if (b != '\r') {
        line.append((char) b);
      }
    }
    return line.toString();
  }
}
