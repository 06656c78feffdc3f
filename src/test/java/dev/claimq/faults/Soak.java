package dev.claimq.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * The soak's measuring and judging, as small pure functions: what a process uses (from /proc), a
 * least-squares slope over series that restarts cut into segments, and the rule that says whether a
 * series is flat within noise (see docs/reliability.md, scenario 16).
 */
final class Soak {
  /** A fitted change must exceed this many residual standard deviations to count as a trend. */
  static final double K = 3;

  private Soak() {}

  /** One sample of a series: seconds since the soak began, the value, and its segment. */
  record Point(double t, double y, int segment) {}

  /**
   * A series' bounds: a change over the run up to {@code floor} never matters (it is below what
   * anyone would act on, and covers the quantization of integer series with no noise); one beyond
   * {@code cap} always matters, however noisy the series (noise must not hide a drift that large).
   */
  record Bounds(String unit, double floor, double cap) {}

  /** A least-squares fit: common slope per second, residual standard deviation, samples used. */
  record Fit(double slope, double residualSd, int n, int segments) {}

  /** The verdict on one series. */
  record Judgement(
      String series, String unit, Fit fit, double change, double allowed, boolean flat) {
    /** "rss-a +0.12 MiB/min (change +3.0 MiB, allowed 16.0, n 150)" */
    String brief() {
      if (fit == null) {
        return series + " NOT JUDGED (too few samples after warm-up)";
      }
      return String.format(
          "%s %+.3g %s/min (change %+.3g, allowed %.3g, n %d%s)%s",
          series,
          fit.slope * 60,
          unit,
          change,
          allowed,
          fit.n,
          fit.segments > 1 ? ", " + fit.segments + " segments" : "",
          flat ? "" : " NOT FLAT");
    }
  }

  /**
   * One slope shared by every segment, each segment with its own level (least squares with a dummy
   * per segment): a restarted process starts a new series at its own level, and only the trend
   * within each segment says whether something grows. Null with fewer than 3 points, or when no
   * segment spans any time.
   */
  static Fit fit(List<Point> points) {
    if (points.size() < 3) {
      return null;
    }
    int segments = (int) points.stream().mapToInt(Point::segment).distinct().count();
    java.util.Map<Integer, double[]> means = new java.util.HashMap<>(); // sum t, sum y, n
    for (Point p : points) {
      double[] m = means.computeIfAbsent(p.segment, s -> new double[3]);
      m[0] += p.t;
      m[1] += p.y;
      m[2]++;
    }
    double sxy = 0;
    double sxx = 0;
    for (Point p : points) {
      double[] m = means.get(p.segment);
      double dt = p.t - m[0] / m[2];
      sxy += dt * (p.y - m[1] / m[2]);
      sxx += dt * dt;
    }
    if (sxx == 0) {
      return null;
    }
    double slope = sxy / sxx;
    double squares = 0;
    for (Point p : points) {
      double[] m = means.get(p.segment);
      double residual = p.y - m[1] / m[2] - slope * (p.t - m[0] / m[2]);
      squares += residual * residual;
    }
    int freedom = Math.max(1, points.size() - segments - 1);
    return new Fit(slope, Math.sqrt(squares / freedom), points.size(), segments);
  }

  /**
   * Flat within noise: the fitted change over the judged span, |slope × span|, is at most the
   * larger of K residual standard deviations and the series' floor, and never more than its cap. A
   * series with too few samples to fit is not flat: a soak that measured nothing proves nothing.
   */
  static Judgement judge(String series, List<Point> points, double spanSeconds, Bounds bounds) {
    Fit fit = fit(points);
    if (fit == null) {
      return new Judgement(series, bounds.unit, null, 0, 0, false); // unjudged is no pass
    }
    double change = fit.slope * spanSeconds;
    double allowed = Math.min(bounds.cap, Math.max(K * fit.residualSd, bounds.floor));
    return new Judgement(series, bounds.unit, fit, change, allowed, Math.abs(change) <= allowed);
  }

  /**
   * The points of a series to judge: those after the run's warm-up and after their own segment's
   * warm-up (a restarted JVM grows as it warms up, which is not a leak).
   */
  static List<Point> afterWarmUp(List<Point> points, double warmUpSeconds) {
    java.util.Map<Integer, Double> firstSeen = new java.util.HashMap<>();
    List<Point> kept = new ArrayList<>();
    for (Point p : points) {
      double start = firstSeen.computeIfAbsent(p.segment, s -> p.t);
      double segmentStart = p.segment == 0 ? 0 : start;
      if (p.t >= warmUpSeconds && p.t >= segmentStart + warmUpSeconds) {
        kept.add(p);
      }
    }
    return kept;
  }

  /** The resident set of a process in MiB (VmRSS), or NaN when it is gone. */
  static double rssMib(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("VmRSS:")) {
          String[] parts = line.trim().split("\\s+");
          return Long.parseLong(parts[1]) / 1024.0; // kB
        }
      }
    } catch (IOException | RuntimeException gone) {
      // the process exited between listing and reading
    }
    return Double.NaN;
  }

  /** The open file descriptors of a process, or NaN when it is gone. */
  static double openFds(long pid) {
    try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      return fds.count();
    } catch (IOException | RuntimeException gone) {
      return Double.NaN;
    }
  }

  /** The p-quantile (0..1) of the values, nearest rank; NaN when there are none. */
  static double percentile(double[] values, double p) {
    if (values.length == 0) {
      return Double.NaN;
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int rank = (int) Math.ceil(p * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }
}
