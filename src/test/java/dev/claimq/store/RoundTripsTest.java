package dev.claimq.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.claimq.MigratedSchema;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.SocketFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One statement, one round trip. pgjdbc before 42.7.13 sent a Sync of its own, and waited for the
 * answer, before every run of a statement that it had described (one bound with a null, as an
 * enqueue without runAt or maxAttempts is) whose result has a column of variable length (text,
 * jsonb): two round trips per enqueue instead of one. The pom pins a driver without that wait; this
 * counts what the driver writes to the socket per run of the service's own enqueue statement, bound
 * as the service binds it, and fails with the older driver. No Quarkus: the driver must see the
 * same counting class as this test, on a schema of its own made by the service's migrations.
 */
class RoundTripsTest {
  private static final MigratedSchema SCHEMA = new MigratedSchema("claimq_round_trips");

  @BeforeAll
  static void migrate() {
    SCHEMA.migrate();
  }

  @AfterAll
  static void drop() throws Exception {
    SCHEMA.drop();
  }

  @Test
  void an_enqueue_bound_with_nulls_is_one_write_to_the_database_per_run() throws Exception {
    Sql enqueue = ItemRepository.ENQUEUE;
    List<Integer> writesPerRun = new ArrayList<>();
    try (Connection connection = countedConnection()) {
      String queue = "round-trips";
      // Past the driver's prepareThreshold (5), where the statement is prepared on the server and
      // described, which is when the older driver started to wait before each run.
      for (int run = 1; run <= 10; run++) {
        int before = CountingSocketFactory.WRITES.get();
        List<Boolean> changed =
            enqueue
                .on(connection)
                .set("queue", queue)
                .set("dedupeKey", "k-" + run)
                .set("payload", "{\"n\": " + run + "}")
                .set("priority", 0)
                .set("maxAttempts", null)
                .set("defaultMaxAttempts", 5)
                .set("runAt", null)
                .set("enqueuedBy", "round-trips")
                .set("traceparent", null)
                .list(row -> row.getBoolean("changed"));
        assertThat(changed).as("run %d inserts its item", run).containsExactly(true);
        writesPerRun.add(CountingSocketFactory.WRITES.get() - before);
      }
    }

    assertThat(writesPerRun.subList(5, 10))
        .as("socket writes per run, from the 6th run on (all runs: %s)", writesPerRun)
        .containsOnly(1);
  }

  /** A connection of its own, in autocommit, as the pool's are, whose writes are counted. */
  private static Connection countedConnection() throws Exception {
    Properties properties = new Properties();
    properties.setProperty("user", MigratedSchema.USER);
    properties.setProperty("currentSchema", SCHEMA.name());
    properties.setProperty("socketFactory", CountingSocketFactory.class.getName());
    return DriverManager.getConnection(MigratedSchema.URL, properties);
  }

  /**
   * Sockets that count the writes made to them. The driver buffers a round trip's messages and
   * writes them at once, so each write is one send to the server.
   */
  public static final class CountingSocketFactory extends SocketFactory {
    static final AtomicInteger WRITES = new AtomicInteger();

    @Override
    public Socket createSocket() {
      return new Socket() {
        @Override
        public OutputStream getOutputStream() throws IOException {
          return new FilterOutputStream(super.getOutputStream()) {
            @Override
            public void write(byte[] bytes, int offset, int length) throws IOException {
              WRITES.incrementAndGet();
              out.write(bytes, offset, length);
            }

            @Override
            public void write(int b) throws IOException {
              WRITES.incrementAndGet();
              out.write(b);
            }
          };
        }
      };
    }

    @Override
    public Socket createSocket(String host, int port) {
      throw new UnsupportedOperationException("the driver connects the socket it creates");
    }

    @Override
    public Socket createSocket(String host, int port, java.net.InetAddress local, int localPort) {
      throw new UnsupportedOperationException("the driver connects the socket it creates");
    }

    @Override
    public Socket createSocket(java.net.InetAddress host, int port) {
      throw new UnsupportedOperationException("the driver connects the socket it creates");
    }

    @Override
    public Socket createSocket(
        java.net.InetAddress address, int port, java.net.InetAddress local, int localPort) {
      throw new UnsupportedOperationException("the driver connects the socket it creates");
    }
  }
}
