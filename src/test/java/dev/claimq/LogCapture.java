package dev.claimq;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.jboss.logmanager.ExtLogRecord;

/**
 * Records what the service logs while a test runs, so a test can assert that a client's mistake was
 * not logged as the service's own error. Attach with {@link #start}, detach with close().
 */
public final class LogCapture implements AutoCloseable {
  private final Logger root = Logger.getLogger("");
  private final List<LogRecord> records = new CopyOnWriteArrayList<>();
  private final Handler handler;

  private LogCapture(Level level) {
    handler =
        new Handler() {
          @Override
          public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= level.intValue()) {
              records.add(record);
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    root.addHandler(handler);
  }

  /** Starts recording every record at this level or above, from any logger. */
  public static LogCapture start(Level level) {
    return new LogCapture(level);
  }

  public List<LogRecord> records() {
    return List.copyOf(records);
  }

  /** The ERROR (SEVERE) records or worse, each as "logger: message [throwable class]". */
  public List<String> errors() {
    return records.stream()
        .filter(record -> record.getLevel().intValue() >= Level.SEVERE.intValue())
        .map(LogCapture::format)
        .toList();
  }

  public static String format(LogRecord record) {
    String message =
        record instanceof ExtLogRecord ext ? ext.getFormattedMessage() : record.getMessage();
    Throwable thrown = record.getThrown();
    return record.getLoggerName()
        + ": "
        + message
        + (thrown == null ? "" : " [" + thrown.getClass().getName() + "]");
  }

  @Override
  public void close() {
    root.removeHandler(handler);
  }
}
