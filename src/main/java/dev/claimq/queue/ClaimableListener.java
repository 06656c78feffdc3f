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
 * Wakes parked long-poll claims when an item becomes claimable. New items are signalled by the
 * service after their enqueue commits: a parked claim on this instance is woken at once, and the
 * other instances hear of it by a NOTIFY this listener sends on its own connection, outside any
 * enqueue transaction (a NOTIFY inside one would serialize every enqueue's commit). Items put back
 * to pending are signalled by a trigger (V2__notify_claimable.sql). The listener holds one
 * connection of its own, outside the pool, and reconnects if it drops. Signals can be lost while it
 * reconnects, so a fallback poll wakes one waiter per queue every
 * claimq.long-poll.fallback-interval as well.
 */
@ApplicationScoped
public class ClaimableListener {
  private static final Logger LOG = Logger.getLogger(ClaimableListener.class);
  // How long one wait for notifications lasts: also the most an enqueue's signal waits to be sent.
  private static final int WAIT_MILLIS = 5;

  private final ClaimWaiters waiters;
  private final String url;
  private final Properties credentials = new Properties();
  private final String channel;
  private final java.util.Set<String> toAnnounce =
      java.util.concurrent.ConcurrentHashMap.newKeySet();
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

  /** After an enqueue commits: wake a claim parked here now, and tell the other instances. */
  void onEnqueued(
      @Observes(during = jakarta.enterprise.event.TransactionPhase.AFTER_SUCCESS)
          ItemsEnqueued event) {
    waiters.wakeOne(event.queue());
    toAnnounce.add(event.queue());
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
        int ownPid = postgres.getBackendPID();
        while (running) {
          announce(connection);
          PGNotification[] notifications = postgres.getNotifications(WAIT_MILLIS);
          if (notifications != null) {
            for (PGNotification notification : notifications) {
              if (notification.getPID() != ownPid) { // our own announcements woke us already
                waiters.wakeOne(notification.getParameter());
              }
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

  /** Sends one NOTIFY per queue that got new items since the last round. */
  private void announce(Connection connection) throws SQLException {
    if (toAnnounce.isEmpty()) {
      return;
    }
    java.util.List<String> queues = new java.util.ArrayList<>(toAnnounce);
    toAnnounce.removeAll(queues);
    try (var notify = connection.prepareStatement("SELECT pg_notify(?, q) FROM unnest(?) AS q")) {
      notify.setString(1, channel);
      notify.setArray(2, connection.createArrayOf("text", queues.toArray()));
      notify.execute();
    } catch (SQLException e) {
      toAnnounce.addAll(queues); // announce them after reconnecting
      throw e;
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
