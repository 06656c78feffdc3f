import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The HTTP side of claimq's benchmark (bench/run.sh runs it): a closed-loop load generator on
 * plain sockets, one kept-alive connection per platform thread, so that the generator costs as
 * little CPU as possible on the machine it shares with the service. JDK 17 only:
 *
 * <pre>
 *   java bench/LoadGen.java MODE --url http://127.0.0.1:PORT [options]
 * </pre>
 *
 * Modes: start, enqueue, dupes, drain, complete-next, claim-by-id, batch-drain, latency, process,
 * park (see usage()). Each
 * prints one line of key=value pairs on stdout; every loop ends by count or by time.
 */
public final class LoadGen {

  static final String AGENT = "dev-agent-key";
  static final String WORKER = "dev-worker-key";
  static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*\"?(\\d+)\"?");
  static final Pattern TOKEN = Pattern.compile("\"claimToken\"\\s*:\\s*\"([^\"]+)\"");
  /** Where a complete-with-next answer's next item starts (its last property). */
  static final Pattern NEXT = Pattern.compile("\"next\"\\s*:\\s*(null|\\{)");

  final Map<String, String> opts;
  final String host;
  final int port;
  final String queue;
  final int threads;
  final double warmup;
  final double seconds;
  final long pid;
  final String runId;

  volatile boolean stop;
  /** True inside the measured window: only then do a closed loop's unit times count. */
  volatile boolean measuring;
  /**
   * Unit times of a closed loop: 10 µs steps up to 100 ms, then 1 ms steps up to 60 s (the last
   * bucket: slower).
   */
  final AtomicLongArray unitTimes = new AtomicLongArray(10_000 + 59_900 + 1);

  static int bucket(long nanos) {
    long micros = nanos / 1_000;
    if (micros < 100_000) {
      return (int) (micros / 10);
    }
    return (int) Math.min(10_000 + 59_900, 10_000 + (micros - 100_000) / 1_000);
  }

  /** The upper bound of a bucket, in ms. */
  static double bucketMs(int i) {
    return i < 10_000 ? (i + 1) / 100.0 : 100 + (i - 10_000 + 1);
  }
  final LongAdder ops = new LongAdder();
  final LongAdder empties = new LongAdder();
  final LongAdder errors = new LongAdder();
  final AtomicLong firstError = new AtomicLong();
  volatile String errorSample = "";

  LoadGen(Map<String, String> opts) {
    this.opts = opts;
    URI url = URI.create(opts.getOrDefault("url", "http://127.0.0.1:8080"));
    this.host = url.getHost();
    this.port = url.getPort();
    this.queue = opts.getOrDefault("queue", "bench");
    this.threads = Integer.parseInt(opts.getOrDefault("threads", "8"));
    this.warmup = Double.parseDouble(opts.getOrDefault("warmup", "1"));
    this.seconds = Double.parseDouble(opts.getOrDefault("seconds", "5"));
    this.pid = Long.parseLong(opts.getOrDefault("pid", "0"));
    this.runId = opts.getOrDefault("run", Long.toString(System.currentTimeMillis(), 36));
    if (!host.equals("127.0.0.1") && !host.equals("localhost") && !host.equals("[::1]")) {
      throw new IllegalArgumentException("loopback addresses only, not " + host);
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 0 || args[0].startsWith("-")) {
      usage();
      System.exit(2);
    }
    Map<String, String> opts = new HashMap<>();
    for (int i = 1; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 == args.length) {
        usage();
        System.exit(2);
      }
      opts.put(args[i].substring(2), args[++i]);
    }
    LoadGen gen = new LoadGen(opts);
    String result =
        switch (args[0]) {
          case "start" -> gen.start();
          case "enqueue" -> gen.closedLoop(gen::enqueueOnce);
          case "dupes" -> gen.closedLoop(gen::duplicateOnce);
          case "drain" -> gen.closedLoop(gen::drainOnce);
          case "complete-next" -> gen.completeNext();
          case "park" -> gen.park();
          case "claim-by-id" -> gen.closedLoop(gen::claimByIdOnce);
          case "batch-drain" -> gen.batchDrain();
          case "latency" -> gen.latency();
          case "process" -> gen.processAll();
          default -> {
            usage();
            System.exit(2);
            yield "";
          }
        };
    System.out.println(result);
  }

  static void usage() {
    System.err.println(
        """
        usage: java bench/LoadGen.java MODE --url http://127.0.0.1:PORT [--option value ...]
          start        --since-ms EPOCH_MS [--timeout S]   time from launch to the first served
                       request (an authenticated claim-next, answered 200 or 204)
          enqueue      new items, unique dedupe keys                 (items/s)
          dupes        --keys K: enqueue of K existing keys, replays (requests/s)
          drain        claim-next + complete per item                (items/s; p50/p99 ms)
          complete-next  claim once, then complete with "next" per item: one call per item
                       (items/s; skipped while the service answers 400 to "next")
          claim-by-id  --from ID --to ID: claims of preloaded ids    (claims/s)
          batch-drain  --max 10: claim max + one batch complete      (items/s; skipped on 404)
          latency      --rate R: claim-next + complete at R/s, open loop; claim p50/p99 (ms)
          process      --max 100: batch-drains the queue until it is empty     (items, items/s)
          park         --threads N --wait S: N long-polls parked on an empty queue for --seconds
                       (or until the file --until exists), each asked again when answered 204;
                       --spread yes: poll t's first wait is 1 + t mod S seconds, so that their
                       waits run out evenly over S seconds, as those of workers that did not all
                       start in the same second do (without it: all together)
                                                                  (parked, answered, errors)
        common: --threads N (8) --warmup S (1) --seconds S (5) --queue Q (bench) --pid P (the
          service's pid, for CPU per 1,000 items and RSS) --run ID (keeps dedupe keys unique)""");
  }

  // ---- modes ----------------------------------------------------------------------------------

  String start() throws Exception {
    long since = Long.parseLong(opts.get("since-ms"));
    long deadline = System.nanoTime() + (long) (Double.parseDouble(opts.getOrDefault("timeout", "60")) * 1e9);
    String body = "{\"worker\":\"start\",\"leaseSeconds\":60}";
    while (System.nanoTime() < deadline) {
      try (Http http = new Http(host, port)) {
        Response r = http.post("/v1/queues/" + queue + "/claim", WORKER, body);
        if (r.status == 200 || r.status == 204) {
          long ms = System.currentTimeMillis() - since;
          return "start_ms=" + ms;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(10);
    }
    throw new IllegalStateException("the service did not answer within the timeout");
  }

  interface Op {
    /** One unit of work on this thread's connection; returns the items it accounts for. */
    int run(Http http, int thread, long n) throws IOException;
  }

  /** N threads each repeat op on their own connection; counts only inside the measured window. */
  String closedLoop(Op op) throws Exception {
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      Thread w =
          new Thread(
              () -> {
                Http http = null;
                long n = 0;
                while (!stop) {
                  try {
                    if (http == null) {
                      http = new Http(host, port);
                    }
                    long began = System.nanoTime();
                    int items = op.run(http, thread, n++);
                    if (measuring && items > 0) {
                      unitTimes.incrementAndGet(bucket(System.nanoTime() - began));
                    }
                    if (items > 0) {
                      ops.add(items);
                    } else if (items == 0) {
                      empties.increment();
                    }
                  } catch (IOException | RuntimeException e) {
                    error(e.toString());
                    if (http != null) {
                      http.close();
                    }
                    http = null;
                  }
                }
                if (http != null) {
                  http.close();
                }
              },
              "load-" + t);
      w.setDaemon(true);
      workers.add(w);
      w.start();
    }
    return measure(workers);
  }

  String measure(List<Thread> workers) throws Exception {
    Thread.sleep((long) (warmup * 1000));
    long ops0 = ops.sum();
    long empty0 = empties.sum();
    long err0 = errors.sum();
    long cpu0 = cpuTicks();
    long t0 = System.nanoTime();
    measuring = true;
    Thread.sleep((long) (seconds * 1000));
    measuring = false;
    long ops1 = ops.sum();
    long empty1 = empties.sum();
    long err1 = errors.sum();
    long cpu1 = cpuTicks();
    long t1 = System.nanoTime();
    stop = true;
    for (Thread w : workers) {
      w.join(35_000);
    }
    double elapsed = (t1 - t0) / 1e9;
    long items = ops1 - ops0;
    StringBuilder out = new StringBuilder();
    out.append(String.format(Locale.ROOT, "rate=%.1f items=%d seconds=%.2f", items / elapsed, items, elapsed));
    out.append(" empty=").append(empty1 - empty0).append(" errors=").append(err1 - err0);
    appendUnitTimes(out);
    appendProcess(out, cpu0, cpu1, items);
    if (err1 > 0) {
      out.append(" error_sample=").append(errorSample.replace(' ', '_'));
    }
    return out.toString();
  }

  int enqueueOnce(Http http, int thread, long n) throws IOException {
    String key = "e-" + runId + "-" + thread + "-" + n;
    String body =
        "{\"dedupeKey\":\"" + key + "\",\"payload\":{\"to\":\"bench@example.com\",\"n\":" + n + "}}";
    Response r = http.post("/v1/queues/" + queue + "/items", AGENT, body);
    return expect(r, 201) ? 1 : -1;
  }

  int duplicateOnce(Http http, int thread, long n) throws IOException {
    long keys = Long.parseLong(opts.getOrDefault("keys", "1000"));
    long k = (thread * 7919L + n) % keys;
    String body = "{\"dedupeKey\":\"d-" + k + "\",\"payload\":{\"to\":\"bench@example.com\",\"k\":" + k + "}}";
    Response r = http.post("/v1/queues/" + queue + "/items", AGENT, body);
    // The first pass (in the warm-up) creates the keys; every later call is a replay.
    return r.status == 200 || r.status == 201 ? 1 : fail(r);
  }

  int drainOnce(Http http, int thread, long n) throws IOException {
    Response claim =
        http.post(
            "/v1/queues/" + queue + "/claim",
            WORKER,
            "{\"worker\":\"bench-" + thread + "\",\"leaseSeconds\":600}");
    if (claim.status == 204) {
      return 0;
    }
    if (!expect(claim, 200)) {
      return -1;
    }
    String id = group(ID, claim.body);
    String token = group(TOKEN, claim.body);
    Response done =
        http.post(
            "/v1/items/" + id + "/complete",
            WORKER,
            "{\"claimToken\":\"" + token + "\",\"externalRef\":\"bench\"}");
    return expect(done, 200) ? 1 : -1;
  }

  /**
   * One HTTP call per item: each worker claims once, then completes with "next", which finishes
   * the item in hand and answers the next claimed one (or null: claim again). A unit is one call.
   * Says skipped (and why) while the service refuses "next".
   */
  String completeNext() throws Exception {
    String claimBody = "{\"worker\":\"bench-next\",\"leaseSeconds\":600}";
    try (Http http = new Http(host, port)) {
      Response claim = http.post("/v1/queues/" + queue + "/claim", WORKER, claimBody);
      if (!expect(claim, 200)) {
        return "skipped=1 reason=no_item_to_probe_with_(claim_answered_" + claim.status + ")";
      }
      Response probe =
          http.post(
              "/v1/items/" + group(ID, claim.body) + "/complete",
              WORKER,
              completeWithNext(group(TOKEN, claim.body), "bench-next"));
      if (probe.status == 400) {
        return "skipped=1 reason=complete_with_next_answers_400";
      }
      if (!expect(probe, 200) || !NEXT.matcher(probe.body).find()) {
        return "skipped=1 reason=complete_with_next_answers_"
            + probe.status
            + "_without_a_next_property";
      }
    }
    String[] held = new String[threads * 2];
    return closedLoop(
        (http, thread, n) -> {
          if (held[2 * thread] == null) {
            Response claim =
                http.post(
                    "/v1/queues/" + queue + "/claim",
                    WORKER,
                    "{\"worker\":\"bench-" + thread + "\",\"leaseSeconds\":600}");
            if (claim.status == 204) {
              return 0;
            }
            if (!expect(claim, 200)) {
              return -1;
            }
            held[2 * thread] = group(ID, claim.body);
            held[2 * thread + 1] = group(TOKEN, claim.body);
          }
          Response done =
              http.post(
                  "/v1/items/" + held[2 * thread] + "/complete",
                  WORKER,
                  completeWithNext(held[2 * thread + 1], "bench-" + thread));
          held[2 * thread] = null;
          if (!expect(done, 200)) {
            return -1;
          }
          Matcher next = NEXT.matcher(done.body);
          if (!next.find()) {
            throw new IllegalStateException("no next in " + done.body);
          }
          if (next.group(1).equals("{")) {
            String rest = done.body.substring(next.start());
            held[2 * thread] = group(ID, rest);
            held[2 * thread + 1] = group(TOKEN, rest);
          }
          return 1;
        });
  }

  static String completeWithNext(String token, String worker) {
    return "{\"claimToken\":\""
        + token
        + "\",\"externalRef\":\"bench\",\"next\":{\"worker\":\""
        + worker
        + "\",\"leaseSeconds\":600}}";
  }

  /**
   * Parks --threads long-polls (claim-next with --wait seconds) on a queue that stays empty, for
   * --seconds, each asked again as soon as it is answered; small thread stacks, so that thousands
   * fit. With --spread yes, the first waits are staggered over 1 to --wait seconds, so that from
   * then on the polls run out and ask again evenly, --threads ÷ --wait per second; without it,
   * they all run out together, every --wait seconds. Prints how many were parked at once, and
   * any answer other than 204.
   */
  String park() throws Exception {
    int wait = Integer.parseInt(opts.getOrDefault("wait", "20"));
    boolean spread = "yes".equals(opts.getOrDefault("spread", "no"));
    String body = bodyWaiting(wait);
    LongAdder connected = new LongAdder();
    LongAdder answered = new LongAdder();
    List<Thread> parked = new ArrayList<>();
    long end = System.nanoTime() + (long) (seconds * 1e9);
    for (int t = 0; t < threads; t++) {
      String first = spread ? bodyWaiting(1 + t % wait) : body;
      Thread w =
          new Thread(
              null,
              () -> {
                Http http = null;
                boolean counted = false;
                String ask = first;
                while (!stop && System.nanoTime() < end) {
                  try {
                    if (http == null) {
                      http = new Http(host, port);
                      // A parked poll answers after its wait, later on a busy machine: only
                      // a minute past the wait counts as no answer.
                      http.socket.setSoTimeout((wait + 60) * 1000);
                      if (!counted) {
                        connected.increment();
                        counted = true;
                      }
                    }
                    Response r = http.post("/v1/queues/" + queue + "/claim", WORKER, ask);
                    ask = body;
                    answered.increment();
                    if (r.status != 204) {
                      fail(r);
                    }
                  } catch (IOException | RuntimeException e) {
                    error(e.toString());
                    if (http != null) {
                      http.close();
                    }
                    http = null;
                    sleepNanos(100_000_000L);
                  }
                }
                if (http != null) {
                  http.close();
                }
              },
              "parked-" + t,
              128 * 1024);
      w.setDaemon(true);
      parked.add(w);
      w.start();
    }
    // Ends at --seconds, or as soon as the --until file exists (bench/run.sh makes it once the
    // drain beside the parked polls is over).
    Path until = opts.containsKey("until") ? Path.of(opts.get("until")) : null;
    while (System.nanoTime() < end && (until == null || !Files.exists(until))) {
      sleepNanos(100_000_000L);
    }
    stop = true;
    return "parked=" + connected.sum() + " answered=" + answered.sum() + " errors=" + errors.sum()
        + (errors.sum() > 0 ? " error_sample=" + errorSample.replace(' ', '_') : "");
  }

  static String bodyWaiting(int seconds) {
    return "{\"worker\":\"bench-parked\",\"leaseSeconds\":60,\"waitSeconds\":" + seconds + "}";
  }

  final AtomicLong nextId = new AtomicLong(-1);

  int claimByIdOnce(Http http, int thread, long n) throws IOException {
    long from = Long.parseLong(opts.get("from"));
    long to = Long.parseLong(opts.get("to"));
    nextId.compareAndSet(-1, from);
    long id = nextId.getAndIncrement();
    if (id > to) {
      stop = true;
      return 0;
    }
    Response r =
        http.post(
            "/v1/items/" + id + "/claim",
            WORKER,
            "{\"worker\":\"bench-" + thread + "\",\"leaseSeconds\":600}");
    return r.status == 200 ? 1 : r.status == 204 ? 0 : fail(r);
  }

  /** Batch drain against the batch contract; says skipped (and why) when it is not served. */
  String batchDrain() throws Exception {
    int max = Integer.parseInt(opts.getOrDefault("max", "10"));
    String claimBody = "{\"worker\":\"bench-batch\",\"leaseSeconds\":600,\"max\":" + max + "}";
    try (Http http = new Http(host, port)) {
      Response probe = http.post("/v1/items:complete", WORKER, "{\"items\":[]}");
      if (probe.status == 404 || probe.status == 405) {
        return "skipped=1 reason=POST_/v1/items:complete_answers_" + probe.status;
      }
      Response claim = http.post("/v1/queues/" + queue + "/claim:batch", WORKER, claimBody);
      if (claim.status == 400 || claim.status == 404) {
        return "skipped=1 reason=claim_with_max_answers_" + claim.status;
      }
      if (claim.status == 200) {
        completeBatch(http, claim.body);
      }
    }
    return closedLoop(
        (http, thread, n) -> {
          Response claim = http.post("/v1/queues/" + queue + "/claim:batch", WORKER, claimBody);
          if (claim.status == 204) {
            return 0;
          }
          if (!expect(claim, 200)) {
            return -1;
          }
          return completeBatch(http, claim.body);
        });
  }

  /**
   * Works the whole queue off through the batch calls (claim --max, then one batch complete) until
   * a claim finds it empty: the churn of a queue that has been in use for a while.
   */
  String processAll() throws Exception {
    int max = Integer.parseInt(opts.getOrDefault("max", "100"));
    String claimBody = "{\"worker\":\"bench-churn\",\"leaseSeconds\":600,\"max\":" + max + "}";
    long t0 = System.nanoTime();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w =
          new Thread(
              () -> {
                try (Http http = new Http(host, port)) {
                  while (true) {
                    Response claim = http.post("/v1/queues/" + queue + "/claim:batch", WORKER, claimBody);
                    if (claim.status == 204 || !expect(claim, 200)) {
                      return;
                    }
                    int done = completeBatch(http, claim.body);
                    if (done < 0) {
                      return;
                    }
                    ops.add(done);
                  }
                } catch (IOException | RuntimeException e) {
                  error(e.toString());
                }
              },
              "process-" + t);
      workers.add(w);
      w.start();
    }
    for (Thread w : workers) {
      w.join();
    }
    double elapsed = (System.nanoTime() - t0) / 1e9;
    return String.format(
            Locale.ROOT,
            "rate=%.1f items=%d seconds=%.2f errors=%d",
            ops.sum() / elapsed,
            ops.sum(),
            elapsed,
            errors.sum())
        + (errors.sum() > 0 ? " error_sample=" + errorSample.replace(' ', '_') : "");
  }

  int completeBatch(Http http, String claimed) throws IOException {
    Matcher ids = ID.matcher(claimed);
    Matcher tokens = TOKEN.matcher(claimed);
    StringBuilder body = new StringBuilder("{\"items\":[");
    int count = 0;
    int from = 0;
    while (tokens.find()) {
      // An item's id is its first field and its token its last (its payload lies between and may
      // hold an "id" of its own): take the first id after the previous item's token.
      if (!ids.find(from) || ids.start() > tokens.start()) {
        throw new IllegalStateException("claimed item without an id: " + claimed);
      }
      from = tokens.end();
      body.append(count++ == 0 ? "" : ",")
          .append("{\"id\":\"")
          .append(ids.group(1))
          .append("\",\"claimToken\":\"")
          .append(tokens.group(1))
          .append("\"}");
    }
    body.append("]}");
    if (count == 0) {
      return 0;
    }
    Response done = http.post("/v1/items:complete", WORKER, body.toString());
    if (!expect(done, 200)) {
      return -1;
    }
    int ok = 0;
    for (int i = done.body.indexOf("\"status\":200"); i >= 0; i = done.body.indexOf("\"status\":200", i + 1)) {
      ok++;
    }
    return ok;
  }

  /**
   * Claims at a fixed rate, each followed by its complete. A claim's latency is measured from the
   * moment it was due, not from when a thread got to it, so a stall counts in full.
   */
  String latency() throws Exception {
    double rate = Double.parseDouble(opts.getOrDefault("rate", "500"));
    long total = (long) ((warmup + seconds) * rate);
    long warmupOps = (long) (warmup * rate);
    long[] latencies = new long[(int) total];
    AtomicLong next = new AtomicLong();
    long t0 = System.nanoTime() + 50_000_000L;
    long cpuAtStart[] = {0};
    long measureStart = t0 + (long) (warmup * 1e9);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      Thread w =
          new Thread(
              () -> {
                Http http = null;
                long deadline = t0 + (long) ((warmup + seconds + 30) * 1e9);
                for (long i = next.getAndIncrement(); i < total && !stop; i = next.getAndIncrement()) {
                  long due = t0 + (long) (i * 1e9 / rate);
                  long wait = due - System.nanoTime();
                  if (wait > 0) {
                    sleepNanos(wait);
                  }
                  if (System.nanoTime() > deadline) {
                    break;
                  }
                  try {
                    if (http == null) {
                      http = new Http(host, port);
                    }
                    Response claim =
                        http.post(
                            "/v1/queues/" + queue + "/claim",
                            WORKER,
                            "{\"worker\":\"bench-" + thread + "\",\"leaseSeconds\":600}");
                    latencies[(int) i] = System.nanoTime() - due;
                    if (claim.status == 204) {
                      empties.increment();
                      continue;
                    }
                    if (!expect(claim, 200)) {
                      continue;
                    }
                    Response done =
                        http.post(
                            "/v1/items/" + group(ID, claim.body) + "/complete",
                            WORKER,
                            "{\"claimToken\":\"" + group(TOKEN, claim.body) + "\"}");
                    if (expect(done, 200)) {
                      ops.increment();
                    }
                  } catch (IOException | RuntimeException e) {
                    latencies[(int) i] = -1;
                    error(e.toString());
                    if (http != null) {
                      http.close();
                    }
                    http = null;
                  }
                }
                if (http != null) {
                  http.close();
                }
              },
              "latency-" + t);
      w.setDaemon(true);
      workers.add(w);
      w.start();
    }
    sleepNanos(measureStart - System.nanoTime());
    cpuAtStart[0] = cpuTicks();
    long ops0 = ops.sum();
    for (Thread w : workers) {
      w.join((long) ((warmup + seconds + 35) * 1000));
    }
    stop = true;
    long cpu1 = cpuTicks();
    // Below the asked rate, the service fell behind: the latencies are mostly queueing.
    double achieved = (ops.sum() - ops0 + empties.sum()) / ((System.nanoTime() - measureStart) / 1e9);
    long measured = total - warmupOps;
    long[] sample = new long[(int) measured];
    int n = 0;
    long missed = 0;
    for (long i = warmupOps; i < total; i++) {
      long v = latencies[(int) i];
      if (v > 0) {
        sample[n++] = v;
      } else {
        missed++;
      }
    }
    java.util.Arrays.sort(sample, 0, n);
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "achieved_rate=%.1f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f claims=%d missed=%d empty=%d"
                + " errors=%d",
            achieved,
            pct(sample, n, 0.50),
            pct(sample, n, 0.99),
            n == 0 ? Double.NaN : sample[n - 1] / 1e6,
            n,
            missed,
            empties.sum(),
            errors.sum()));
    appendProcess(out, cpuAtStart[0], cpu1, ops.sum() - ops0);
    return out.toString();
  }

  // ---- helpers --------------------------------------------------------------------------------

  /** p50 and p99 of the measured window's unit times (one item's calls), in ms. */
  void appendUnitTimes(StringBuilder out) {
    long total = 0;
    for (int i = 0; i < unitTimes.length(); i++) {
      total += unitTimes.get(i);
    }
    if (total == 0) {
      return;
    }
    double[] at = {0.50, 0.99};
    String[] names = {"p50_ms", "p99_ms"};
    for (int k = 0; k < at.length; k++) {
      long rank = (long) Math.ceil(at[k] * total);
      long seen = 0;
      for (int i = 0; i < unitTimes.length(); i++) {
        seen += unitTimes.get(i);
        if (seen >= rank) {
          out.append(String.format(Locale.ROOT, " %s=%.2f", names[k], bucketMs(i)));
          break;
        }
      }
    }
  }

  static double pct(long[] sorted, int n, double p) {
    if (n == 0) {
      return Double.NaN;
    }
    int i = (int) Math.ceil(p * n) - 1;
    return sorted[Math.max(0, Math.min(n - 1, i))] / 1e6;
  }

  static void sleepNanos(long nanos) {
    if (nanos <= 0) {
      return;
    }
    try {
      Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  boolean expect(Response r, int status) {
    if (r.status == status) {
      return true;
    }
    fail(r);
    return false;
  }

  int fail(Response r) {
    error("HTTP " + r.status + " " + r.body.substring(0, Math.min(200, r.body.length())));
    return -1;
  }

  void error(String what) {
    errors.increment();
    if (firstError.compareAndSet(0, 1)) {
      errorSample = what;
    }
  }

  static String group(Pattern p, String body) {
    Matcher m = p.matcher(body);
    if (!m.find()) {
      throw new IllegalStateException("no " + p + " in " + body);
    }
    return m.group(1);
  }

  /** utime + stime of the service process, in clock ticks (0 when no pid was given). */
  long cpuTicks() {
    if (pid == 0) {
      return 0;
    }
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // Fields 14 and 15 of /proc/PID/stat (utime, stime); f[0] is field 3.
      return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    } catch (IOException e) {
      return 0;
    }
  }

  void appendProcess(StringBuilder out, long cpu0, long cpu1, long items) {
    if (pid == 0) {
      return;
    }
    long hz = Long.parseLong(opts.getOrDefault("clk-tck", "100"));
    double cpuMs = (cpu1 - cpu0) * 1000.0 / hz;
    out.append(String.format(Locale.ROOT, " cpu_ms_per_1000=%.1f", items == 0 ? Double.NaN : cpuMs * 1000 / items));
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          out.append(" rss_kb=").append(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException e) {
      // the process is gone; leave RSS out
    }
  }

  record Response(int status, String body) {}

  /** A minimal HTTP/1.1 client on one kept-alive connection: enough for claimq's JSON answers. */
  static final class Http implements AutoCloseable {
    final Socket socket;
    final OutputStream out;
    final InputStream in;
    final String hostHeader;

    Http(String host, int port) throws IOException {
      socket = new Socket();
      socket.setTcpNoDelay(true);
      socket.connect(new InetSocketAddress(host, port), 5_000);
      socket.setSoTimeout(30_000);
      out = socket.getOutputStream();
      in = new BufferedInputStream(socket.getInputStream(), 16 * 1024);
      hostHeader = host + ":" + port;
    }

    Response post(String path, String key, String json) throws IOException {
      byte[] body = json.getBytes(StandardCharsets.UTF_8);
      String head =
          "POST "
              + path
              + " HTTP/1.1\r\nHost: "
              + hostHeader
              + "\r\nAuthorization: Bearer "
              + key
              + "\r\nContent-Type: application/json\r\nContent-Length: "
              + body.length
              + "\r\n\r\n";
      byte[] h = head.getBytes(StandardCharsets.US_ASCII);
      byte[] request = new byte[h.length + body.length];
      System.arraycopy(h, 0, request, 0, h.length);
      System.arraycopy(body, 0, request, h.length, body.length);
      out.write(request);
      out.flush();
      return read();
    }

    Response read() throws IOException {
      String statusLine = line();
      if (statusLine == null) {
        throw new IOException("connection closed");
      }
      int status = Integer.parseInt(statusLine.substring(9, 12));
      long length = -1;
      boolean chunked = false;
      boolean close = false;
      for (String l = line(); l != null && !l.isEmpty(); l = line()) {
        String lower = l.toLowerCase(Locale.ROOT);
        if (lower.startsWith("content-length:")) {
          length = Long.parseLong(lower.substring(15).trim());
        } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
          chunked = true;
        } else if (lower.startsWith("connection:") && lower.contains("close")) {
          close = true;
        }
      }
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      if (chunked) {
        for (String size = line(); size != null; size = line()) {
          int n = Integer.parseInt(size.split(";")[0].trim(), 16);
          if (n == 0) {
            line();
            break;
          }
          body.write(in.readNBytes(n));
          line();
        }
      } else if (length > 0) {
        body.write(in.readNBytes((int) length));
      } else if (length < 0 && status != 204 && status != 304 && close) {
        body.write(in.readAllBytes());
      }
      if (close) {
        throw new IOException("server closed the connection after HTTP " + status);
      }
      return new Response(status, body.toString(StandardCharsets.UTF_8));
    }

    String line() throws IOException {
      StringBuilder s = new StringBuilder();
      for (int c = in.read(); c >= 0; c = in.read()) {
        if (c == '\n') {
          int len = s.length();
          return len > 0 && s.charAt(len - 1) == '\r' ? s.substring(0, len - 1) : s.toString();
        }
        s.append((char) c);
      }
      return s.length() == 0 ? null : s.toString();
    }

    @Override
    public void close() {
      try {
        socket.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
  }
}
