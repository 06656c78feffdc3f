package dev.claimq.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The soak's slope and flatness rule, on made-up series whose answer is known. */
class SoakTest {
  static final Soak.Bounds RSS = new Soak.Bounds("MiB", 16, 64);

  /** 30 minutes sampled every 10 s: level + slope per minute × t + Gaussian noise. */
  static List<Soak.Point> series(double level, double perMinute, double noise, long seed) {
    Random random = new Random(seed);
    List<Soak.Point> points = new ArrayList<>();
    for (int t = 0; t <= 1800; t += 10) {
      points.add(
          new Soak.Point(t, level + perMinute * t / 60.0 + noise * random.nextGaussian(), 0));
    }
    return points;
  }

  @Test
  void the_fit_finds_a_known_slope_and_the_noise_around_it() {
    Soak.Fit fit = Soak.fit(series(300, 2, 5, 1));
    assertThat(fit.slope() * 60).isCloseTo(2, within(0.1));
    assertThat(fit.residualSd()).isCloseTo(5, within(1.0));
    assertThat(fit.n()).isEqualTo(181);
  }

  @Test
  void a_flat_noisy_series_is_flat() {
    for (long seed = 0; seed < 20; seed++) {
      Soak.Judgement judgement = Soak.judge("rss", series(300, 0, 8, seed), 1800, RSS);
      assertThat(judgement.flat()).as(judgement.brief()).isTrue();
    }
  }

  @Test
  void a_leak_of_a_mib_a_minute_is_not_flat_even_in_noise() {
    for (long seed = 0; seed < 20; seed++) {
      Soak.Judgement judgement = Soak.judge("rss", series(300, 1, 5, seed), 1800, RSS);
      assertThat(judgement.flat()).as(judgement.brief()).isFalse();
      assertThat(judgement.brief()).endsWith("NOT FLAT");
    }
  }

  @Test
  void noise_cannot_hide_a_drift_beyond_the_cap() {
    // 3 MiB a minute in noise of 40 MiB: within 3 sigma, but 90 MiB over the run is past the cap.
    Soak.Judgement judgement = Soak.judge("rss", series(300, 3, 40, 7), 1800, RSS);
    assertThat(judgement.change()).isGreaterThan(64);
    assertThat(judgement.flat()).as(judgement.brief()).isFalse();
  }

  @Test
  void a_change_below_the_floor_is_flat_however_quiet_the_series() {
    // Open descriptors: 120, then 121 for the second half, no noise at all.
    List<Soak.Point> points = new ArrayList<>();
    for (int t = 0; t <= 1800; t += 10) {
      points.add(new Soak.Point(t, t < 900 ? 120 : 121, 0));
    }
    Soak.Judgement judgement = Soak.judge("fds", points, 1800, new Soak.Bounds("fds", 8, 32));
    assertThat(judgement.flat()).as(judgement.brief()).isTrue();
    Soak.Judgement strict = Soak.judge("fds", points, 1800, new Soak.Bounds("fds", 0.5, 32));
    assertThat(strict.flat()).as(strict.brief()).isFalse();
  }

  @Test
  void a_sawtooth_that_vacuum_keeps_resetting_is_flat() {
    List<Soak.Point> points = new ArrayList<>();
    for (int t = 0; t <= 1800; t += 10) {
      points.add(new Soak.Point(t, (t % 170) * 100, 0)); // 0 .. 16,900 dead tuples, reset
    }
    Soak.Judgement judgement =
        Soak.judge("dead", points, 1800, new Soak.Bounds("tuples", 2000, 20000));
    assertThat(judgement.flat()).as(judgement.brief()).isTrue();
  }

  @Test
  void a_restart_starts_a_new_segment_and_only_the_trend_within_segments_counts() {
    // Flat at 400 MiB; restarted at 900 s, flat at 250 MiB after: one fit over both would see a
    // fall of 150 MiB, the fit per segment sees none.
    List<Soak.Point> points = new ArrayList<>();
    for (int t = 0; t <= 1800; t += 10) {
      points.add(new Soak.Point(t, t < 900 ? 400 : 250, t < 900 ? 0 : 1));
    }
    assertThat(Soak.judge("rss", points, 1800, RSS).fit().slope()).isCloseTo(0, within(1e-9));
    List<Soak.Point> oneSegment =
        points.stream().map(p -> new Soak.Point(p.t(), p.y(), 0)).toList();
    assertThat(Soak.judge("rss", oneSegment, 1800, RSS).flat()).isFalse();

    // A leak of 1 MiB a minute that each restart resets is still a leak.
    List<Soak.Point> leaking = new ArrayList<>();
    for (int t = 0; t <= 1800; t += 10) {
      double sinceStart = t < 900 ? t : t - 900;
      leaking.add(new Soak.Point(t, 300 + sinceStart / 60.0, t < 900 ? 0 : 1));
    }
    Soak.Judgement judgement = Soak.judge("rss", leaking, 1800, RSS);
    assertThat(judgement.fit().slope() * 60).isCloseTo(1, within(1e-6));
    assertThat(judgement.flat()).isFalse();
  }

  @Test
  void the_warm_up_is_the_runs_and_each_restarted_segments_own() {
    List<Soak.Point> points =
        List.of(
            new Soak.Point(30, 1, 0),
            new Soak.Point(90, 1, 0),
            new Soak.Point(200, 1, 1), // a restart at 200 s: its own minute of warm-up
            new Soak.Point(250, 1, 1),
            new Soak.Point(270, 1, 1));
    assertThat(Soak.afterWarmUp(points, 60)).extracting(Soak.Point::t).containsExactly(90.0, 270.0);
  }

  @Test
  void too_few_samples_are_not_judged_and_do_not_pass() {
    Soak.Judgement judgement = Soak.judge("rss", List.of(new Soak.Point(1, 1, 0)), 1800, RSS);
    assertThat(judgement.fit()).isNull();
    assertThat(judgement.flat()).isFalse();
    assertThat(judgement.brief()).contains("NOT JUDGED");
  }

  @Test
  void the_percentile_is_the_nearest_rank() {
    double[] values = new double[100];
    for (int i = 0; i < 100; i++) {
      values[i] = 100 - i; // 100 .. 1, unsorted
    }
    assertThat(Soak.percentile(values, 0.99)).isEqualTo(99);
    assertThat(Soak.percentile(new double[] {5}, 0.99)).isEqualTo(5);
    assertThat(Soak.percentile(new double[0], 0.99)).isNaN();
  }
}
