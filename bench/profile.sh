#!/usr/bin/env bash
# Where the service's CPU goes during the 8-worker drain (claim-next + complete, bench/LoadGen.java),
# a batch drain (--mode batch-drain: claim --max, then one batch complete) or the enqueue of new
# items (--mode enqueue), measured with async-profiler 4.2 (Maven Central:
# tools.profiler:async-profiler, its native library taken from the jar) attached to the packaged
# service with jcmd. Three windows on one service, after a warm-up: one without the profiler (the
# service's CPU per 1,000 items), one in CPU mode and one in wall-clock mode. Writes the flame
# graphs (html) and the collapsed stacks to target/profile/, and prints the top self-time frames
# and each layer's share.
#
#   bench/profile.sh                  # 20 s per window after a 20 s warm-up
#   bench/profile.sh --seconds 10 --no-build
#   bench/profile.sh --mode enqueue
#   bench/profile.sh --mode batch-drain --max 10 --preload 250000
#
# Options: --mode drain|batch-drain|enqueue (what runs in each measured window; drain), --max N
# (a batch drain's claim size; 10), --seconds S (per window; 20), --warmup S (enqueues, then the
# mode's own calls, before the first window; 20), --threads N (8), --preload N (items per drain;
# 60,000: a batch drain needs more), --top N (frames printed; 25), --no-build. Environment: as
# bench/run.sh (BENCH_PGHOST, BENCH_PGPORT, BENCH_PGUSER, BENCH_JAVA_OPTS,
# BENCH_MALLOC_ARENA_MAX), BENCH_DB (claimq_bench_profile: created here and dropped at the end),
# BENCH_JAVA_HOME (the JDK that runs the service, and whose jcmd attaches the profiler; the java
# on the PATH by default: the build stays Java 17 either way).
set -Eeuo pipefail
cd "$(dirname "$0")/.."

MODE=drain MAX=10 SECONDS_PER=20 WARMUP=20 THREADS=8 PRELOAD=60000 TOP=25 BUILD=1
usage() { sed -n '2,/^set -Eeuo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --mode) MODE=$2; shift ;;
    --max) MAX=$2; shift ;;
    --seconds) SECONDS_PER=$2; shift ;;
    --warmup) WARMUP=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --preload) PRELOAD=$2; shift ;;
    --top) TOP=$2; shift ;;
    --no-build) BUILD=0 ;;
    *) usage ;;
  esac
  shift
done

case "$MODE" in
  drain) WHAT="$THREADS-worker drain (claim-next + complete)" ;;
  batch-drain) WHAT="$THREADS-worker batch drain (claim $MAX + complete $MAX)" ;;
  enqueue) WHAT="$THREADS-client enqueue" ;;
  *) usage ;;
esac

PGHOST_=${BENCH_PGHOST:-127.0.0.1} PGPORT_=${BENCH_PGPORT:-5432} PGUSER_=${BENCH_PGUSER:-postgres}
DB=${BENCH_DB:-claimq_bench_profile}
case "$PGHOST_" in 127.*|localhost|::1) ;; *) echo "profile: loopback databases only" >&2; exit 2 ;; esac
case "$DB" in claimq_bench*) ;; *) echo "profile: BENCH_DB must start with claimq_bench" >&2; exit 2 ;; esac
JAVA_BIN=java JCMD=jcmd
if [ -n "${BENCH_JAVA_HOME:-}" ]; then JAVA_BIN=$BENCH_JAVA_HOME/bin/java JCMD=$BENCH_JAVA_HOME/bin/jcmd; fi
JAVA_OPTS_=${BENCH_JAVA_OPTS-"-XX:+UseSerialGC -Xms32m -Xmx256m -XX:TrimNativeHeapInterval=5000"}
# The README's environment for the service: two malloc arenas (BENCH_MALLOC_ARENA_MAX; empty: the
# C library's own choice).
ARENAS=${BENCH_MALLOC_ARENA_MAX-2}
OUT=target/profile
AP_VERSION=4.2

log() { echo "profile: $*" >&2; }
psql_() { PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -h "$PGHOST_" -p "$PGPORT_" -U "$PGUSER_" "$@"; }
sql() { PGOPTIONS="-c search_path=claimq,public" psql_ -d "$DB" -tA -c "$1"; }

WORK=$(mktemp -d)
SVC_PID= DB_CREATED=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$SVC_PID" ] && kill -0 "$SVC_PID" 2>/dev/null; then
    kill -TERM "$SVC_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$SVC_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SVC_PID" 2>/dev/null || true
  fi
  if [ "$DB_CREATED" = 1 ]; then
    psql_ -d postgres -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" >/dev/null 2>&1 \
      || log "could not drop database $DB; drop it by hand"
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'log "stopped: line $LINENO exited with status $?: $BASH_COMMAND"' ERR
trap 'log interrupted; exit 130' INT TERM

# ---- tools ------------------------------------------------------------------------------------
"$JAVA_BIN" -version >/dev/null 2>&1 && command -v "$JCMD" >/dev/null || { log "no java and jcmd ($JAVA_BIN)"; exit 1; }
if [ "$BUILD" = 1 ] || [ ! -f target/quarkus-app/quarkus-run.jar ]; then
  log "building the service (./mvnw package -DskipTests)"
  ./mvnw -q package -DskipTests >"$WORK/build.log" 2>&1 || { tail -n 40 "$WORK/build.log" >&2; exit 1; }
fi
# async-profiler from Maven Central, into target/ (never committed); its linux-x64 library is
# what jcmd loads into the service.
AP_JAR=target/async-profiler/async-profiler-$AP_VERSION.jar
if [ ! -f "$AP_JAR" ]; then
  log "fetching async-profiler $AP_VERSION (Maven Central)"
  ./mvnw -q dependency:copy -Dartifact=tools.profiler:async-profiler:$AP_VERSION \
    -DoutputDirectory=target/async-profiler >"$WORK/fetch.log" 2>&1 || { tail -n 20 "$WORK/fetch.log" >&2; exit 1; }
fi
[ "$(uname -m)" = x86_64 ] || { log "the library taken from the jar is linux-x64's"; exit 1; }
unzip -o -q -d target/async-profiler "$AP_JAR" linux-x64/libasyncProfiler.so
AP_LIB=$PWD/target/async-profiler/linux-x64/libasyncProfiler.so
javac -d "$WORK/loadgen" bench/LoadGen.java
loadgen() { timeout $((SECONDS_PER + WARMUP + 120)) java -cp "$WORK/loadgen" LoadGen "$@"; }
# jcmd loads the library again for each command; async-profiler keeps one session across them.
# The quotes keep jcmd from reading the command's "=" as its own option syntax; jcmd exits 0
# whatever the agent answers, so the answer is checked.
profiler() {
  "$JCMD" "$SVC_PID" JVMTI.agent_load "$AP_LIB" "\"$1\"" >"$WORK/jcmd.out" 2>&1 || true
  cat "$WORK/jcmd.out" >>"$WORK/jcmd.log"
  grep -q '^return code: 0' "$WORK/jcmd.out" || { log "async-profiler refused $1: $(cat "$WORK/jcmd.out")"; exit 1; }
}

KEYS=$(sed -n '/^dev-keys=/,/^[^ ]*[^\\]$/p' src/main/resources/application.properties \
  | grep -o 'dev-[a-z]*:[^,\\ ]*' | paste -sd, -)
[ -n "$KEYS" ] || { log "no dev keys found in application.properties"; exit 1; }
PORT=
for p in $(seq 18280 18379); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then PORT=$p; break; fi
done
[ -n "$PORT" ] || { log "no free port in 18280-18379"; exit 1; }
URL=http://127.0.0.1:$PORT

# ---- the database and the service -------------------------------------------------------------
psql_ -d postgres -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" >/dev/null
psql_ -d postgres -c "CREATE DATABASE \"$DB\"" >/dev/null
DB_CREATED=1
since=$(date +%s%3N)
QUARKUS_HTTP_PORT=$PORT QUARKUS_HTTP_HOST=127.0.0.1 \
  QUARKUS_DATASOURCE_JDBC_URL=jdbc:postgresql://$PGHOST_:$PGPORT_/$DB \
  QUARKUS_DATASOURCE_USERNAME=$PGUSER_ CLAIMQ_SCHEMA=claimq CLAIMQ_AUTH_KEYS=$KEYS \
  ${ARENAS:+env MALLOC_ARENA_MAX=$ARENAS} "$JAVA_BIN" $JAVA_OPTS_ -jar target/quarkus-app/quarkus-run.jar >"$WORK/service.log" 2>&1 &
SVC_PID=$!
loadgen start --url "$URL" --since-ms "$since" --timeout 120 >/dev/null \
  || { tail -n 40 "$WORK/service.log" >&2; exit 1; }
# Pending items in queue "bench", as bench/run.sh preloads them, then settled (statistics, hint
# bits, the preload's WAL flushed) so that neither lands inside a drain.
preload() {
  sql "TRUNCATE item, attempt, item_action RESTART IDENTITY"
  sql "INSERT INTO item (queue, dedupe_key, payload, max_attempts, enqueued_by)
       SELECT 'bench', 'p-' || g, jsonb_build_object('to', 'bench@example.com', 'n', g), 5, 'dev-agent'
       FROM generate_series(1, $1) g"
  sql "VACUUM ANALYZE item"; sql "CHECKPOINT"
}
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
measure() {   # the LoadGen line of one measured window: a drain of a fresh backlog (refusing
             # an emptied queue), or new enqueues
  local out
  if [ "$MODE" = enqueue ]; then
    sql "TRUNCATE item, attempt, item_action RESTART IDENTITY"; sql "CHECKPOINT"
  else
    preload "$PRELOAD"
  fi
  out=$(loadgen "$MODE" --url "$URL" --pid "$SVC_PID" --clk-tck "$(getconf CLK_TCK)" --threads "$THREADS" \
    --max "$MAX" --warmup 2 --seconds "$SECONDS_PER")
  [ "$(kv "$out" errors)" = 0 ] || { log "$MODE errors: $out"; exit 1; }
  if [ "$MODE" != enqueue ]; then
    [ "$(sql "SELECT count(*) FROM item WHERE state = 'pending'")" -gt 0 ] \
      || { log "the queue ran empty: raise --preload"; exit 1; }
  fi
  echo "$out"
}

log "service on $URL ($("$JAVA_BIN" -version 2>&1 | sed -n 2p)); warming up for ${WARMUP}s"
half=$(( (WARMUP + 1) / 2 ))
loadgen enqueue --url "$URL" --warmup 0 --seconds "$half" --threads "$THREADS" --run warm >/dev/null
[ "$MODE" = enqueue ] || preload "$PRELOAD"
loadgen "$MODE" --url "$URL" --warmup 0 --seconds "$half" --threads "$THREADS" --max "$MAX" >/dev/null

mkdir -p "$OUT"
plain=$(measure)
log "without the profiler: $plain"
for mode in cpu wall; do
  # cpu: perf_events where the kernel allows them, else async-profiler falls back to itimer
  # (it says so in its output). wall: every thread, running or not, at the same interval.
  profiler "start,event=$mode,interval=1ms"
  out=$(measure)
  profiler "dump,collapsed,file=$PWD/$OUT/$mode.collapsed"
  profiler "stop,flamegraph,title=claimq $mode: $WHAT,file=$PWD/$OUT/$mode.html"
  log "$mode mode: $out"
  echo "$out" >"$OUT/$mode.loadgen"
done
grep -i 'warn\|error\|fall' "$WORK/jcmd.log" | sort -u | sed 's/^/profile: async-profiler: /' >&2 || true

# ---- the report -------------------------------------------------------------------------------
# A frame's layer, by its package (async-profiler writes Java frames as pkg/Class.method) or, for
# the JVM's own threads, by the native frames of the collector and the compilers.
LAYERS='Vert.x/Netty=io/vertx|io/netty
RESTEasy Reactive=org/jboss/resteasy/reactive|io/quarkus/resteasy/reactive
Jackson=com/fasterxml/jackson|io/quarkus/jackson
Hibernate Validator=org/hibernate/validator|jakarta/validation|io/quarkus/hibernate/validator
security=io/quarkus/security|io/quarkus/vertx/http/runtime/security|dev/claimq/security
Agroal/pgjdbc=io/agroal|org/postgresql
claimq (own code)=dev/claimq
GC=GCTaskThread|VMThread|VM_GenCollect|SerialHeap|DefNewGeneration|TenuredGeneration|GenCollectedHeap|G1|ParallelScavenge|MarkSweep|SerialFullGC|CollectedHeap::
JIT=CompileBroker|C2Compiler|Compilation::|Compile::|PhaseIdealLoop|ciEnv'
report() {   # mode
  local f=$OUT/$1.collapsed
  echo
  echo "## $1 mode: $(cat "$OUT/$1.loadgen")"
  echo
  echo "Top self-time frames (share of all samples):"
  awk '{n = $NF; sub(/ [0-9]+$/, ""); k = split($0, s, ";"); self[s[k]] += n; total += n}
       END {for (f in self) printf "%6.2f%%  %s\n", 100 * self[f] / total, f}' "$f" \
    | sort -rn | sed -n "1,${TOP}p"
  echo
  echo "Inclusive share per layer (a sample counts for every layer on its stack):"
  awk -v layers="$LAYERS" '
    BEGIN {m = split(layers, ls, "\n"); for (i = 1; i <= m; i++) {p = index(ls[i], "="); name[i] = substr(ls[i], 1, p - 1); re[i] = substr(ls[i], p + 1)}}
    {n = $NF; total += n; for (i = 1; i <= m; i++) if ($0 ~ re[i]) inc[i] += n}
    END {for (i = 1; i <= m; i++) printf "%6.2f%%  %s\n", 100 * inc[i] / total, name[i]}' "$f"
  echo
  echo "Own share per layer (a sample counts for the layer of the innermost frame on its stack"
  echo "that has one: JDK and native frames count for the layer that called them):"
  awk -v layers="$LAYERS" '
    BEGIN {m = split(layers, ls, "\n"); for (i = 1; i <= m; i++) {p = index(ls[i], "="); name[i] = substr(ls[i], 1, p - 1); re[i] = substr(ls[i], p + 1)}}
    {n = $NF; total += n; sub(/ [0-9]+$/, ""); k = split($0, s, ";"); hit = 0
     for (j = k; j >= 1 && !hit; j--) for (i = 1; i <= m; i++) if (s[j] ~ re[i]) {hit = i; break}
     own[hit] += n}
    END {for (i = 1; i <= m; i++) printf "%6.2f%%  %s\n", 100 * own[i] / total, name[i]
         printf "%6.2f%%  none of these (JVM, kernel, JDK threads)\n", 100 * own[0] / total}' "$f"
  echo
  echo "The same, of the samples outside GC and JIT (the request path and its threads), and the"
  echo "top self-time frames there:"
  grep -Ev "$(sed -n 's/^\(GC\|JIT\)=//p' <<<"$LAYERS" | paste -sd'|')" "$f" >"$WORK/app.collapsed" || true
  awk -v layers="$LAYERS" '
    BEGIN {m = split(layers, ls, "\n"); for (i = 1; i <= m; i++) {p = index(ls[i], "="); name[i] = substr(ls[i], 1, p - 1); re[i] = substr(ls[i], p + 1)}}
    {n = $NF; total += n; for (i = 1; i <= m; i++) if ($0 ~ re[i]) inc[i] += n}
    END {for (i = 1; i <= m - 2; i++) printf "%6.2f%%  %s\n", 100 * inc[i] / total, name[i]}' "$WORK/app.collapsed"
  echo
  awk '{n = $NF; sub(/ [0-9]+$/, ""); k = split($0, s, ";"); self[s[k]] += n; total += n}
       END {for (f in self) printf "%6.2f%%  %s\n", 100 * self[f] / total, f}' "$WORK/app.collapsed" \
    | sort -rn | sed -n "1,${TOP}p"
}
{
  echo "# claimq profile, $(date -u +%Y-%m-%dT%H:%MZ): $WHAT"
  echo
  echo "Service: $("$JAVA_BIN" -version 2>&1 | sed -n 2p), \`${ARENAS:+MALLOC_ARENA_MAX=$ARENAS }$JAVA_OPTS_\`; load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores."
  echo "Without the profiler: $plain"
  report cpu
  report wall
} | tee "$OUT/report.md"
log "flame graphs: $OUT/cpu.html, $OUT/wall.html; collapsed stacks and report.md beside them"
