package dev.claimq.longpoll;

import dev.claimq.config.ClaimqConfig;
import dev.claimq.config.Intervals;
import dev.claimq.queue.ClaimTokens;
import dev.claimq.queue.ItemsEnqueued;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Wakes parked long-poll claims when an item becomes claimable. New items are signalled by the
 * service after their enqueue commits: a parked claim on this instance is woken at once, and the
 * other instances hear of it by a NOTIFY sent a few milliseconds later on a pooled connection,
 * outside any enqueue transaction (a NOTIFY inside one would serialize every enqueue's commit), one
 * per queue for all the enqueues of those milliseconds. Items put back to pending are signalled by
 * a trigger (V2__notify_claimable.sql).
 *
 * <p>Announcements are sent only while another instance listens: each says "@here" on the channel
 * when it begins to listen and every 5 s after (which also proves its connection still answers),
 * and "@bye" when it stops, and answers a newcomer's "@here" with its own. A lone instance, the
 * common case, sends none: under a busy enqueue they were a transaction every 5 ms.
 *
 * <p>The listener holds one connection of its own, outside the pool, and reconnects if it drops or
 * stops answering. Signals can be lost (while it reconnects, when an announcement fails, or in the
 * milliseconds before an instance has heard a newcomer), so a fallback poll wakes one waiter per
 * queue every claimq.long-poll.fallback-interval as well.
 */
@ApplicationScoped
public class ClaimableListener {
  private static final Logger LOG = Logger.getLogger(ClaimableListener.class);
  // How long one wait for notifications lasts: also how long shutdown may wait for the thread.
  private static final int WAIT_MILLIS = 500;
  // How long the server may take to answer the heartbeat, or to accept a connection, before the
  // connection is dropped: a half-open one (a network cut, a hung server) would otherwise deliver
  // no notification, and raise no error, ever.
  private static final String TIMEOUT_SECONDS = "5";
  private static final String HERE = "@here";
  private static final String BYE = "@bye";
  // Enqueues within this window share one announcement per queue.
  private static final long ANNOUNCE_DELAY_MILLIS = 5;

  private final ParkedClaims waiters;
  private final String url;
  private final Properties credentials = new Properties();
  private final String channel;
  private final java.util.Optional<java.time.Duration> fallbackInterval;
  private final java.util.Set<String> toAnnounce =
      java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final AtomicBoolean announceScheduled = new AtomicBoolean();
  // Sends the announcements, and runs the fallback poll.
  private final ScheduledExecutorService announcer =
      Executors.newSingleThreadScheduledExecutor(
          task -> {
            Thread thread = new Thread(task, "claimq-claimable-announcer");
            thread.setDaemon(true);
            return thread;
          });
  // Sent with every announcement, so this instance can tell its own (whose waiters it woke
  // already) from other instances'. The trigger's notifications carry no tag.
  private final String instanceTag = ClaimTokens.next().substring(0, 16);
  private final DataSource dataSource;
  private final OtherInstances others = new OtherInstances();
  private volatile int otherInstances;
  // While the listener is not listening it cannot hear the others, so it announces to be safe.
  private volatile boolean announcing = true;
  private volatile boolean running;
  // Why the listener is not listening now (null while it is), for health.
  private volatile String notListening = "not connected yet";
  private Thread thread;

  ClaimableListener(
      ParkedClaims waiters,
      ClaimqConfig config,
      DataSource dataSource,
      @ConfigProperty(name = "quarkus.datasource.jdbc.url") String url,
      @ConfigProperty(name = "quarkus.datasource.username") java.util.Optional<String> username,
      @ConfigProperty(name = "quarkus.datasource.password") java.util.Optional<String> password) {
    this.waiters = waiters;
    this.dataSource = dataSource;
    this.url = url;
    username.ifPresent(user -> credentials.setProperty("user", user));
    password.ifPresent(secret -> credentials.setProperty("password", secret));
    this.channel = "claimq." + config.schema();
    this.fallbackInterval = Intervals.of(config.longPoll().fallbackInterval());
    credentials.setProperty("connectTimeout", TIMEOUT_SECONDS);
    credentials.setProperty("socketTimeout", TIMEOUT_SECONDS);
    credentials.setProperty("tcpKeepAlive", "true");
    credentials.setProperty("ApplicationName", listenerName(channel));
  }

  void start(@Observes StartupEvent event) {
    running = true;
    // On the executor's monotonic clock: a wall clock stepped back would stop the fallback.
    fallbackInterval.ifPresent(
        every ->
            announcer.scheduleWithFixedDelay(
                this::fallbackPoll, every.toNanos(), every.toNanos(), TimeUnit.NANOSECONDS));
    thread = new Thread(this::listen, "claimq-claimable-listener");
    thread.setDaemon(true);
    thread.start();
  }

  void stop(@Observes ShutdownEvent event) {
    running = false;
    announcer.shutdownNow();
    if (thread != null) {
      thread.interrupt();
    }
    try (Connection connection = dataSource.getConnection()) {
      say(connection, BYE); // the others stop announcing to this one now, not in 16 s
    } catch (SQLException | RuntimeException e) {
      LOG.debugf("could not say goodbye on %s: %s", channel, e.getMessage());
    }
  }

  /** Never throws: an executor runs a task that threw never again. */
  private void fallbackPoll() {
    try {
      waiters.wakeOneOfEach();
    } catch (RuntimeException | Error e) {
      LOG.error("the long-poll fallback failed; it runs again on its interval", e);
    }
  }

  /** After an enqueue has committed: wake a claim parked here now, and tell the other instances. */
  void onEnqueued(@Observes ItemsEnqueued event) {
    waiters.wakeOne(event.queue());
    if (!announcing) {
      return; // no other instance listens
    }
    toAnnounce.add(event.queue());
    if (announceScheduled.compareAndSet(false, true)) {
      try {
        announcer.schedule(this::announce, ANNOUNCE_DELAY_MILLIS, TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException shuttingDown) {
        announceScheduled.set(false);
      }
    }
  }

  private void listen() {
    long backoffMillis = 250;
    // An outage is one warning when it starts and one line when it ends, as for the background
    // jobs, not a warning every 5 s while it lasts.
    boolean lost = false;
    while (running) {
      try (Connection connection = DriverManager.getConnection(url, credentials)) {
        try (Statement statement = connection.createStatement()) {
          statement.execute("LISTEN \"" + channel.replace("\"", "\"\"") + "\"");
        }
        say(connection, HERE);
        long saidAt = System.nanoTime();
        LOG.debugf("listening on %s", channel);
        if (lost) {
          lost = false;
          LOG.infof("claimable listener is listening again");
        }
        notListening = null;
        backoffMillis = 250;
        waiters.wakeOneOfEach(); // signals may have been missed while disconnected
        PGConnection postgres = connection.unwrap(PGConnection.class);
        while (running) {
          PGNotification[] notifications = postgres.getNotifications(WAIT_MILLIS);
          long now = System.nanoTime();
          for (PGNotification notification :
              notifications == null ? new PGNotification[0] : notifications) {
            heard(notification.getParameter(), now, connection);
          }
          if (now - saidAt > OtherInstances.HEARTBEAT_NANOS) {
            say(connection, HERE); // throws within the socket timeout if nobody answers
            saidAt = now;
          }
          otherInstances = others.present(now);
          announcing = otherInstances > 0;
        }
      } catch (SQLException e) {
        announcing = true;
        if (running) {
          notListening = "lost its connection: " + e.getMessage();
          if (!lost) {
            lost = true;
            LOG.warnf(
                "claimable listener lost its connection (%s); retrying until it can listen again",
                e.getMessage());
          } else {
            LOG.debugf("claimable listener still cannot listen (%s)", e.getMessage());
          }
          sleep(backoffMillis);
          backoffMillis = Math.min(backoffMillis * 2, 5_000);
        }
      }
    }
  }

  /**
   * Why the listener is not listening for enqueues now; empty while it is. Without it, parked
   * claims still wake on the fallback poll, only later.
   */
  public java.util.Optional<String> notListening() {
    return java.util.Optional.ofNullable(notListening);
  }

  /** How many other instances listen on this schema's channel, as far as this one has heard. */
  public int otherInstances() {
    return otherInstances;
  }

  /** The listener's connection's application_name, by which an operator can find it. */
  public static String listenerName(String channel) {
    return "claimq-listener " + channel;
  }

  /**
   * A notification is "queue" (from the trigger), or "queue tag", "@here tag" or "@bye tag" from an
   * instance: no queue's name begins with "@".
   */
  private void heard(String payload, long now, Connection connection) throws SQLException {
    int space = payload.indexOf(' ');
    if (space < 0) {
      waiters.wakeOne(payload);
      return;
    }
    String what = payload.substring(0, space);
    String tag = payload.substring(space + 1);
    if (tag.equals(instanceTag)) {
      return; // our own: it woke our waiters already
    }
    if (what.equals(BYE)) {
      others.gone(tag);
      return;
    }
    if (others.heard(tag, now)) {
      say(connection, HERE); // a newcomer: it has not heard of this instance yet
    }
    if (!what.equals(HERE)) {
      waiters.wakeOne(what);
    }
  }

  private void say(Connection connection, String word) throws SQLException {
    try (PreparedStatement notify = connection.prepareStatement("SELECT pg_notify(?, ?)")) {
      notify.setString(1, channel);
      notify.setString(2, word + " " + instanceTag);
      notify.execute();
    }
  }

  /** Sends one NOTIFY per queue that got new items since the last announcement. */
  private void announce() {
    announceScheduled.set(false); // from here on, a new enqueue schedules the next announcement
    List<String> queues = new ArrayList<>(toAnnounce);
    toAnnounce.removeAll(queues);
    if (queues.isEmpty()) {
      return;
    }
    try (Connection connection = dataSource.getConnection();
        PreparedStatement notify =
            connection.prepareStatement("SELECT pg_notify(?, q || ' ' || ?) FROM unnest(?) AS q")) {
      notify.setString(1, channel);
      notify.setString(2, instanceTag);
      notify.setArray(3, connection.createArrayOf("text", queues.toArray()));
      notify.execute();
    } catch (SQLException | RuntimeException e) {
      // The other instances' fallback poll finds these items instead, a little later.
      LOG.debugf("could not announce new items in %s: %s", queues, e.getMessage());
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
