package dev.claimq.queue;

import dev.claimq.config.ClaimqConfig;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Wakes parked long-poll claims when PostgreSQL says an item became claimable (LISTEN on the
 * channel the item triggers NOTIFY; see V2__notify_claimable.sql). It holds one connection of its
 * own, outside the pool, and reconnects if it drops. Signals can be lost while it reconnects, so a
 * fallback poll wakes one waiter per queue every claimq.long-poll.fallback-interval as well.
 */
@ApplicationScoped
public class ClaimableListener {
  private static final Logger LOG = Logger.getLogger(ClaimableListener.class);
  private static final int WAIT_MILLIS = 500;

  private final ClaimWaiters waiters;
  private final String url;
  private final Properties credentials = new Properties();
  private final String channel;
  private volatile boolean running;
  private Thread thread;

  ClaimableListener(
      ClaimWaiters waiters,
      ClaimqConfig config,
      @ConfigProperty(name = "quarkus.datasource.jdbc.url") String url,
      @ConfigProperty(name = "quarkus.datasource.username") java.util.Optional<String> username,
      @ConfigProperty(name = "quarkus.datasource.password") java.util.Optional<String> password) {
    this.waiters = waiters;
    this.url = url;
    username.ifPresent(user -> credentials.setProperty("user", user));
    password.ifPresent(secret -> credentials.setProperty("password", secret));
    this.channel = "claimq." + config.schema();
  }

  void start(@Observes StartupEvent event) {
    running = true;
    thread = new Thread(this::listen, "claimq-claimable-listener");
    thread.setDaemon(true);
    thread.start();
  }

  void stop(@Observes ShutdownEvent event) {
    running = false;
    if (thread != null) {
      thread.interrupt();
    }
  }

  @Scheduled(
      identity = "long-poll-fallback",
      every = "${claimq.long-poll.fallback-interval}",
      concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
  void fallbackPoll() {
    waiters.wakeOneOfEach();
  }

  private void listen() {
    long backoffMillis = 250;
    while (running) {
      try (Connection connection = DriverManager.getConnection(url, credentials)) {
        try (Statement statement = connection.createStatement()) {
          statement.execute("LISTEN \"" + channel.replace("\"", "\"\"") + "\"");
        }
        LOG.debugf("listening on %s", channel);
        backoffMillis = 250;
        waiters.wakeOneOfEach(); // signals may have been missed while disconnected
        PGConnection postgres = connection.unwrap(PGConnection.class);
        while (running) {
          PGNotification[] notifications = postgres.getNotifications(WAIT_MILLIS);
          if (notifications != null) {
            for (PGNotification notification : notifications) {
              waiters.wakeOne(notification.getParameter());
            }
          }
        }
      } catch (SQLException e) {
        if (running) {
          LOG.warnf("claimable listener lost its connection (%s); retrying", e.getMessage());
          sleep(backoffMillis);
          backoffMillis = Math.min(backoffMillis * 2, 5_000);
        }
      }
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
