package dev.claimq.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What an instance holds, read from outside: open files, threads, busy database sessions and parked
 * claims. The open files are also sorted by kind (sockets by the port they connect and their TCP
 * state), so a leak check that fails says what was left open.
 */
record Resources(
    long files, long threads, int busyBackends, int parked, Map<String, Integer> kinds) {

  static Resources of(ServiceInstance instance) throws Exception {
    Path proc = Path.of("/proc", Long.toString(instance.pid()));
    Map<String, String> sockets = sockets(proc, instance.port);
    Map<String, Integer> kinds = new TreeMap<>();
    long files = 0;
    try (var fds = Files.list(proc.resolve("fd"))) {
      for (Path fd : (Iterable<Path>) fds::iterator) {
        String target;
        try {
          target = Files.readSymbolicLink(fd).toString();
        } catch (IOException closedMeanwhile) {
          continue;
        }
        files++;
        kinds.merge(kind(target, sockets), 1, Integer::sum);
      }
    }
    long threads =
        Files.readAllLines(proc.resolve("status")).stream()
            .filter(l -> l.startsWith("Threads:"))
            .mapToLong(l -> Long.parseLong(l.substring(8).trim()))
            .findFirst()
            .orElse(-1);
    return new Resources(
        files, threads, FaultHarness.busyBackends(), FaultHarness.parked(instance), kinds);
  }

  /**
   * Null when this is back to the baseline, give or take what a quiet service's own pools may open
   * or close (a few files and threads), or what is still held.
   */
  String within(Resources baseline) {
    List<String> over = new ArrayList<>();
    if (files > baseline.files + 32) {
      over.add("open files " + files + " (baseline " + baseline.files + "): " + kinds);
    }
    if (threads > baseline.threads + 16) {
      over.add("threads " + threads + " (baseline " + baseline.threads + ")");
    }
    if (busyBackends > 1) {
      over.add("busy database sessions " + busyBackends);
    }
    if (parked != 0) {
      over.add("parked long-polls " + parked);
    }
    return over.isEmpty() ? null : String.join(", ", over);
  }

  private static String kind(String target, Map<String, String> sockets) {
    if (target.startsWith("socket:[")) {
      return sockets.getOrDefault(target.substring(8, target.length() - 1), "other socket");
    }
    if (target.startsWith("/")) {
      return target.endsWith(".jar") ? "jar" : "file";
    }
    int colon = target.indexOf(':');
    return colon > 0 ? target.substring(0, colon) : target; // pipe, anon_inode
  }

  /**
   * The process's TCP sockets by inode: "client connection ESTABLISHED" for one a client opened to
   * the service's port, "listening", or "to port N STATE" for one the service opened.
   */
  private static Map<String, String> sockets(Path proc, int servicePort) throws IOException {
    String[] states = {
      "?",
      "ESTABLISHED",
      "SYN_SENT",
      "SYN_RECV",
      "FIN_WAIT1",
      "FIN_WAIT2",
      "TIME_WAIT",
      "CLOSE",
      "CLOSE_WAIT",
      "LAST_ACK",
      "LISTEN",
      "CLOSING"
    };
    Map<String, String> byInode = new HashMap<>();
    for (String table : List.of("net/tcp", "net/tcp6")) {
      Path file = proc.resolve(table);
      if (!Files.exists(file)) {
        continue;
      }
      List<String> lines = Files.readAllLines(file);
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.trim().split("\\s+");
        int local = Integer.parseInt(f[1].substring(f[1].lastIndexOf(':') + 1), 16);
        int remote = Integer.parseInt(f[2].substring(f[2].lastIndexOf(':') + 1), 16);
        int code = Integer.parseInt(f[3], 16);
        String state = code < states.length ? states[code] : f[3];
        String kind =
            state.equals("LISTEN")
                ? "listening"
                : local == servicePort
                    ? "client connection " + state
                    : "to port " + remote + " " + state;
        byInode.put(f[9], kind);
      }
    }
    return byInode;
  }
}
