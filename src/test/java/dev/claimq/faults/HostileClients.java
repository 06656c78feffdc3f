package dev.claimq.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Clients that misbehave on purpose, on raw sockets so thousands of them need no thread each: a
 * slowloris that sends its headers a byte a second, long-polls parked by the thousand, and clients
 * that hang up while the answer is on its way. Closing it closes every socket it opened.
 */
final class HostileClients implements AutoCloseable {
  private final InetSocketAddress address;
  private final List<SocketChannel> sockets = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final AtomicBoolean stopping = new AtomicBoolean();

  /** Requests the disconnecting clients made, and hung up on. */
  final AtomicInteger hangUps = new AtomicInteger();

  HostileClients(int port) {
    this.address = new InetSocketAddress("127.0.0.1", port);
  }

  /**
   * Opens the connections, each with the first line of a request, then sends every connection one
   * more header byte a second, so a request is never complete and a connection is never idle.
   */
  void slowloris(int connections) throws IOException {
    byte[] start =
        "GET /v1/queues HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.US_ASCII);
    List<SocketChannel> slow = new ArrayList<>();
    for (int n = 0; n < connections; n++) {
      SocketChannel socket = open();
      writeFully(socket, start);
      socket.configureBlocking(false);
      slow.add(socket);
    }
    byte[] drip = "X-Slow-Header: a-very-long-header-value-sent-a-byte-a-second;".getBytes();
    Thread dripper =
        new Thread(
            () -> {
              for (int second = 0; !stopping.get(); second++) {
                byte[] one = {drip[second % drip.length]};
                for (SocketChannel socket : slow) {
                  try {
                    socket.write(ByteBuffer.wrap(one));
                  } catch (IOException closedByTheService) {
                    // counted by open() when the test asks
                  }
                }
                if (second % drip.length == drip.length - 1) {
                  // Start a fresh header line so the header stays within the service's limits.
                  slow.forEach(s -> writeQuietly(s, "\r\n"));
                }
                if (!sleep(1_000)) {
                  return;
                }
              }
            },
            "slowloris");
    dripper.start();
    threads.add(dripper);
  }

  /**
   * Sends a complete long-poll claim on each of many connections and leaves the answer unread: each
   * claim parks in the service until an item comes or its wait ends.
   */
  void parkLongPolls(int count, String queue, int waitSeconds) throws IOException {
    for (int n = 0; n < count; n++) {
      String body = "{\"worker\":\"parked-" + n + "\",\"waitSeconds\":" + waitSeconds + "}";
      SocketChannel socket = open();
      writeFully(
          socket,
          ("POST /v1/queues/"
                  + queue
                  + "/claim HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                  + Http.WORKER
                  + "\r\nContent-Type: application/json\r\nContent-Length: "
                  + body.length()
                  + "\r\n\r\n"
                  + body)
              .getBytes(StandardCharsets.US_ASCII));
    }
  }

  /**
   * Clients (on {@code threads} threads, about {@code perSecond} calls a second in all) that hang
   * up mid-answer: every other call is a claim-next of the queue that resets the connection as soon
   * as it is sent, so a claim the service grants is never heard of (its lease must expire and the
   * item go to someone else); the rest read the first bytes of a long answer (the metrics) and
   * reset.
   */
  void disconnectMidResponse(int threads, int perSecond, String queue, int leaseSeconds) {
    long pauseMillis = Math.max(1, 1_000L * threads / perSecond);
    for (int t = 0; t < threads; t++) {
      Thread thread =
          new Thread(
              () -> {
                for (int n = 0; !stopping.get(); n++) {
                  try (Socket socket = new Socket()) {
                    socket.connect(address, 2_000);
                    socket.setSoTimeout(5_000);
                    OutputStream out = socket.getOutputStream();
                    if (n % 2 == 0) {
                      String body =
                          "{\"worker\":\"hang-up\",\"leaseSeconds\":" + leaseSeconds + "}";
                      out.write(
                          ("POST /v1/queues/"
                                  + queue
                                  + "/claim HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                                  + Http.WORKER
                                  + "\r\nContent-Type: application/json\r\nContent-Length: "
                                  + body.length()
                                  + "\r\n\r\n"
                                  + body)
                              .getBytes(StandardCharsets.US_ASCII));
                    } else {
                      out.write(
                          "GET /q/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                              .getBytes(StandardCharsets.US_ASCII));
                      InputStream in = socket.getInputStream();
                      in.readNBytes(64);
                    }
                    out.flush();
                    socket.setSoLinger(true, 0); // close sends a reset, not a polite FIN
                    hangUps.incrementAndGet();
                  } catch (IOException e) {
                    // the service closing first is not what is tested here; try again
                  }
                  if (!sleep(pauseMillis)) {
                    return;
                  }
                }
              },
              "hang-up-" + t);
      thread.start();
      this.threads.add(thread);
    }
  }

  /** The raw connections still open from this side whose peer has not closed them. */
  int openConnections() {
    int open = 0;
    ByteBuffer scratch = ByteBuffer.allocate(4096);
    for (SocketChannel socket : sockets) {
      try {
        socket.configureBlocking(false);
        scratch.clear();
        int read;
        boolean closed = false;
        while ((read = socket.read(scratch)) > 0) {
          scratch.clear();
        }
        if (read < 0) {
          closed = true;
        }
        if (!closed) {
          open++;
        }
      } catch (IOException reset) {
        // closed by the peer
      }
    }
    return open;
  }

  /** Stops the client threads and closes every connection (the long-polls are hung up on). */
  @Override
  public void close() throws InterruptedException {
    stopping.set(true);
    for (Thread thread : threads) {
      thread.interrupt();
      thread.join(10_000);
    }
    for (SocketChannel socket : sockets) {
      try {
        socket.close();
      } catch (IOException e) {
        // already gone
      }
    }
    sockets.clear();
    threads.clear();
  }

  private SocketChannel open() throws IOException {
    SocketChannel socket = SocketChannel.open();
    socket.connect(address);
    sockets.add(socket);
    return socket;
  }

  private static void writeFully(SocketChannel socket, byte[] bytes) throws IOException {
    ByteBuffer buffer = ByteBuffer.wrap(bytes);
    while (buffer.hasRemaining()) {
      socket.write(buffer);
    }
  }

  private static void writeQuietly(SocketChannel socket, String text) {
    try {
      socket.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)));
    } catch (IOException closed) {
      // the service closed it
    }
  }

  private static boolean sleep(long millis) {
    try {
      Thread.sleep(millis);
      return true;
    } catch (InterruptedException e) {
      return false;
    }
  }
}
