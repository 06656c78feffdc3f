package dev.claimq.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A TCP proxy between one claimq instance and PostgreSQL, owned by the harness, that plays the
 * network: it passes bytes on, holds them back silently (a partition: no reset, no error, nothing
 * arrives, as with a cable pulled between two hosts), delays them, or holds back one direction
 * only. Held bytes are delivered when the network heals, as TCP's retransmissions would deliver
 * them; by then each side may have given the connection up.
 */
final class TcpProxy implements AutoCloseable {
  /** What the network does to the bytes of each direction. */
  enum Mode {
    PASS,
    /** Neither direction delivers anything until healed. */
    BLACKHOLE,
    /** Every chunk arrives {@link #latency} late, each way. */
    LATENCY,
    /** Claimq's statements do not reach the database; its answers would reach claimq. */
    DROP_TO_DATABASE,
    /** The database gets and runs claimq's statements; its answers do not come back. */
    DROP_FROM_DATABASE
  }

  private static final byte[] END = new byte[0];

  private record Chunk(byte[] bytes, long readAt) {}

  private final ServerSocket server;
  private final InetSocketAddress target;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final Object lock = new Object();
  private volatile Mode mode = Mode.PASS;
  private volatile Duration latency = Duration.ZERO;
  private volatile boolean closed;

  TcpProxy(int port, InetSocketAddress target) throws IOException {
    this.target = target;
    this.server = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "tcp-proxy-" + port);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return server.getLocalPort();
  }

  Mode mode() {
    return mode;
  }

  /** Changes what the network does from now on; held bytes flow again once a mode passes them. */
  void set(Mode mode) {
    set(mode, Duration.ZERO);
  }

  void set(Mode mode, Duration latency) {
    synchronized (lock) {
      this.latency = latency;
      this.mode = mode;
      lock.notifyAll();
    }
  }

  private void accept() {
    while (!closed) {
      try {
        Socket client = server.accept();
        // The connection to the database is made at once, as a router would pass the SYN on;
        // only what travels on it afterwards is subject to the mode.
        Socket database = new Socket();
        try {
          database.connect(target, 5_000);
        } catch (IOException refused) {
          client.close();
          continue;
        }
        for (Socket socket : List.of(client, database)) {
          socket.setTcpNoDelay(true);
          sockets.add(socket);
        }
        pipe(client, database, true);
        pipe(database, client, false);
      } catch (IOException e) {
        if (!closed) {
          System.out.println("faults: proxy accept failed: " + e);
        }
      }
    }
  }

  /** One direction: a reader that stamps each chunk, and a writer that delivers it when allowed. */
  private void pipe(Socket from, Socket to, boolean toDatabase) {
    BlockingQueue<Chunk> chunks = new LinkedBlockingQueue<>();
    Thread reader =
        new Thread(
            () -> {
              byte[] buffer = new byte[16384];
              try (InputStream in = from.getInputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  chunks.add(new Chunk(Arrays.copyOf(buffer, n), System.nanoTime()));
                }
              } catch (IOException gone) {
                // the socket was closed: end this direction as well
              }
              chunks.add(new Chunk(END, System.nanoTime()));
            },
            "tcp-proxy-read");
    Thread writer =
        new Thread(
            () -> {
              try {
                OutputStream out = to.getOutputStream();
                while (true) {
                  Chunk chunk = chunks.take();
                  awaitDelivery(chunk, toDatabase);
                  if (chunk.bytes() == END) {
                    break; // one side closed: the connection is over for both
                  }
                  out.write(chunk.bytes());
                  out.flush();
                }
              } catch (IOException | InterruptedException gone) {
                // the other side is gone
              }
              closeQuietly(from);
              closeQuietly(to);
            },
            "tcp-proxy-write");
    for (Thread thread : List.of(reader, writer)) {
      thread.setDaemon(true);
      thread.start();
    }
  }

  /** Waits while this direction is cut, and until a delayed chunk is due. */
  private void awaitDelivery(Chunk chunk, boolean toDatabase) throws InterruptedException {
    synchronized (lock) {
      while (!closed && held(mode, toDatabase)) {
        lock.wait(100);
      }
    }
    if (mode == Mode.LATENCY) {
      long due = chunk.readAt() + latency.toNanos();
      long wait = due - System.nanoTime();
      if (wait > 0) {
        TimeUnit.NANOSECONDS.sleep(wait);
      }
    }
  }

  private static boolean held(Mode mode, boolean toDatabase) {
    return switch (mode) {
      case BLACKHOLE -> true;
      case DROP_TO_DATABASE -> toDatabase;
      case DROP_FROM_DATABASE -> !toDatabase;
      case PASS, LATENCY -> false;
    };
  }

  private void closeQuietly(Socket socket) {
    sockets.remove(socket);
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    synchronized (lock) {
      lock.notifyAll();
    }
    server.close();
    sockets.forEach(this::closeQuietly);
  }
}
