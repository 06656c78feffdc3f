#!/usr/bin/env bash
# claimq's side-by-side benchmark: the database's own limit (pgbench running the repository's
# SQL), the service over HTTP (bench/LoadGen.java), the reference workers of examples/workers,
# and two peers in-process on the same PostgreSQL (Graphile Worker 0.17 on the node on the PATH,
# Node.js 20 or later; pg-boss 12 on the Node.js 22 that `npm ci` in bench/pgboss installs), in
# one go. Prints one Markdown table (medians of several runs) on stdout; progress goes to stderr.
#
#   bench/run.sh            # full: 3 runs, 10 s per figure, backlog and churn 1,000,000 (40 to
#                           # 70 minutes on 2 cores; docs/performance.md says how long)
#   bench/run.sh --quick    # smoke test: 1 run, 1 s per figure, small backlogs (about 6 minutes
#                           # on a quiet machine); it proves every row works, and its table says
#                           # it holds no figures
#
# Options: --runs N, --seconds S, --warmup S (per figure), --service-warmup S (after each start,
# enqueue + drain to get the JIT past its first compiles; 30), --backlog N, --preload N (items
# per drain), --churn N (items processed before the aged-table drain; 1,000,000), --clients N
# (enqueue, duplicate and claim-by-id concurrency; 8), --parked N (long-polls parked beside a
# drain; 2,000), --no-build, --no-batch, --no-pgboss, --no-graphile, --no-workers (the
# reference-worker rows). Environment: BENCH_PGHOST (127.0.0.1), BENCH_PGPORT (5432),
# BENCH_PGUSER (postgres), BENCH_DB (claimq_bench: created here and dropped at the end, whatever
# happens), BENCH_JAVA_OPTS (JVM options for the service; by default those the README runs it
# with; set it empty for the JVM's own choices), BENCH_MALLOC_ARENA_MAX (the service's
# MALLOC_ARENA_MAX, 2 as in the README; empty for the C library's own), BENCH_JAVA_HOME (a JDK
# for the service alone), BENCH_AOT=1 (the service from an AOT cache, as the README's "Starting
# faster on JDK 25" makes one: needs BENCH_JAVA_HOME on JDK 25 or later; the build is the aot-jar
# packaging, in target/aot, and the first start, not counted, is the training run).
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=full RUNS=3 SECONDS_PER=10 WARMUP=3 BACKLOG=1000000 PRELOAD=200000 CLIENTS=8 SERVICE_WARMUP=30
CHURN=1000000 BIG_PRELOAD=400000 PARKED=2000
PARK_WAIT=20   # the parked long-polls' waitSeconds: the API's longest
BUILD=1 BATCH=1 PGBOSS=1 GRAPHILE=1 WORKERS=1
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --quick) MODE=quick RUNS=1 SECONDS_PER=1 WARMUP=1 BACKLOG=100000 PRELOAD=20000 SERVICE_WARMUP=4 CHURN=100000
      BIG_PRELOAD=100000 ;;
  esac
done
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) ;;
    --runs) RUNS=$2; shift ;;
    --seconds) SECONDS_PER=$2; shift ;;
    --warmup) WARMUP=$2; shift ;;
    --backlog) BACKLOG=$2; shift ;;
    --preload) PRELOAD=$2; shift ;;
    --churn) CHURN=$2; shift ;;
    --clients) CLIENTS=$2; shift ;;
    --parked) PARKED=$2; shift ;;
    --service-warmup) SERVICE_WARMUP=$2; shift ;;
    --no-build) BUILD=0 ;;
    --no-batch) BATCH=0 ;;
    --no-pgboss) PGBOSS=0 ;;
    --no-graphile) GRAPHILE=0 ;;
    --no-workers) WORKERS=0 ;;
    *) usage ;;
  esac
  shift
done
[[ "$SECONDS_PER" =~ ^[0-9]+$ && "$WARMUP" =~ ^[0-9]+$ ]] || usage   # pgbench runs whole seconds
[ "$RUNS" -ge 1 ] && [ "$BACKLOG" -ge 20000 ] && [ "$PRELOAD" -ge 1000 ] && [ "$CHURN" -ge 1000 ] || usage

PGHOST_=${BENCH_PGHOST:-127.0.0.1} PGPORT_=${BENCH_PGPORT:-5432} PGUSER_=${BENCH_PGUSER:-postgres}
DB=${BENCH_DB:-claimq_bench}
case "$PGHOST_" in 127.*|localhost|::1) ;; *) echo "bench: loopback databases only" >&2; exit 2 ;; esac
case "$DB" in claimq_bench*) ;; *) echo "bench: BENCH_DB must start with claimq_bench" >&2; exit 2 ;; esac
SCHEMA=claimq          # the service's own tables, in the bench database only
DRAIN_WORKERS=(1 8 32 128)
LATENCY_RATE=500
SMALL_BACKLOG=10000

log() { echo "bench: $*" >&2; }
psql_() { PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -h "$PGHOST_" -p "$PGPORT_" -U "$PGUSER_" "$@"; }
sql() { PGOPTIONS="-c search_path=$SCHEMA,public" psql_ -d "$DB" -tA -c "$1"; }

WORK=$(mktemp -d)
SVC_PID=
DB_CREATED=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -f "$WORK/children" ]; then
    while read -r pid; do kill -TERM "$pid" 2>/dev/null || true; done <"$WORK/children"
  fi
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
# A command that fails outside a check of its own says where, instead of ending the run silently.
trap 'log "stopped: line $LINENO exited with status $?: $BASH_COMMAND"' ERR
trap 'log interrupted; exit 130' INT TERM

# ---- tools ------------------------------------------------------------------------------------
PGBENCH=$(ls -d /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$PGBENCH" ] || PGBENCH=$(command -v pgbench || true)
[ -n "$PGBENCH" ] || { log "pgbench not found (PostgreSQL's server package ships it)"; exit 1; }
command -v java >/dev/null && command -v javac >/dev/null || { log "needs JDK 17"; exit 1; }
# The peers and the Node.js workers need npm and a node of 20 or later on the PATH (pg-boss 12
# brings its own Node.js 22, but npm needs a node to install it with).
NODE_MAJOR=$(command -v node >/dev/null && node -p 'process.versions.node.split(".")[0]' || echo 0)
if [ "$NODE_MAJOR" -lt 20 ] || ! command -v npm >/dev/null; then
  [ "$PGBOSS$GRAPHILE" = 00 ] || log "Node.js 20 or later and npm not found: pg-boss and Graphile Worker rows skipped"
  PGBOSS=0 GRAPHILE=0 NODE_WORKER=0
else
  NODE_WORKER=1
fi

# BENCH_AOT=1: the packaging an AOT cache can hold all of (the application's classes on the JDK's
# own class path), built beside the usual one so that target/quarkus-app stays what it was.
AOT=${BENCH_AOT:-0}
APP=target/quarkus-app
BUILD_ARGS=(package -DskipTests)
if [ "$AOT" = 1 ]; then
  "${BENCH_JAVA_HOME:+$BENCH_JAVA_HOME/bin/}java" -XX:+PrintFlagsFinal -version 2>/dev/null | grep -q ' AOTCache ' \
    || { log "BENCH_AOT=1 needs BENCH_JAVA_HOME to name a JDK with AOT caches (25 or later)"; exit 1; }
  APP=target/aot
  BUILD_ARGS+=(-Dquarkus.package.jar.type=aot-jar -Dquarkus.package.output-directory=aot)
fi
if [ "$BUILD" = 1 ] || [ ! -f "$APP/quarkus-run.jar" ] \
    || [ ! -f target/test-classes/dev/claimq/bench/PgbenchScripts.class ]; then
  log "building the service (./mvnw ${BUILD_ARGS[*]})"
  ./mvnw -q "${BUILD_ARGS[@]}" >"$WORK/build.log" 2>&1 || { tail -n 40 "$WORK/build.log" >&2; exit 1; }
fi
# Runs a command with a time limit, in the background, and waits for it: the wait builtin returns
# at once on Ctrl-C or TERM (a foreground java or pgbench would hold the signal back until it
# ended), and cleanup() stops it by its pid.
bounded() {
  local limit=$1
  shift
  timeout "$limit" "$@" &
  echo $! >>"$WORK/children"
  wait $!
}
# The pgbench scripts are made from bench/pgbench's templates and the service's own db/item.sql.
java -cp target/classes:target/test-classes dev.claimq.bench.PgbenchScripts bench/pgbench "$WORK/pgbench"
javac -d "$WORK/loadgen" bench/LoadGen.java
loadgen() { bounded $((SECONDS_PER + WARMUP + 120)) java -cp "$WORK/loadgen" LoadGen "$@"; }
# npm ci on first use, and again when what is installed is not what package.json asks for (an
# older install of bench/pgboss holds pg-boss 10 and no Node.js 22).
installed() { sed -n 's/.*"version": "\([0-9]*\)\..*/\1/p' "bench/$1/node_modules/$2/package.json" 2>/dev/null | head -n 1; }
npm_ci() {   # folder, package, major, what it is for
  if [ "$(installed "$1" "$2")" != "$3" ] || [ "$1/$(installed pgboss node)" = pgboss/ ]; then
    log "installing $4 (npm ci in bench/$1)"
    (cd "bench/$1" && npm ci --no-audit --no-fund >"$WORK/npm-$1.log" 2>&1) \
      || { tail -n 5 "$WORK/npm-$1.log" >&2; log "npm ci in bench/$1 failed: $4 rows skipped"; return 1; }
  fi
}
[ "$PGBOSS" = 0 ] || npm_ci pgboss pg-boss 12 "pg-boss 12 and Node.js 22" || PGBOSS=0
BOSS_NODE=bench/pgboss/node_modules/node/bin/node
if [ "$PGBOSS" = 1 ] && ! "$BOSS_NODE" --version >/dev/null 2>&1; then
  log "bench/pgboss has no working Node.js 22 ($BOSS_NODE): pg-boss rows skipped"; PGBOSS=0
fi
[ "$GRAPHILE" = 0 ] || npm_ci graphile graphile-worker 0 "Graphile Worker" || GRAPHILE=0
PYTHON_WORKER=$(command -v python3 >/dev/null && echo 1 || echo 0)
if [ "$WORKERS" = 1 ]; then
  # Its one warning (sun.misc.Signal) is the worker's own business.
  javac -d "$WORK/worker" examples/workers/Worker.java 2>"$WORK/worker-javac.log" \
    || { cat "$WORK/worker-javac.log" >&2; exit 1; }
fi

# The service's API keys: the dev entries of application.properties, as they are written there.
KEYS=$(sed -n '/^dev-keys=/,/^[^ ]*[^\\]$/p' src/main/resources/application.properties \
  | grep -o 'dev-[a-z]*:[^,\\ ]*' | paste -sd, -)
[ -n "$KEYS" ] || { log "no dev keys found in application.properties"; exit 1; }

PORT=
for p in $(seq 18180 18279); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then PORT=$p; break; fi
done
[ -n "$PORT" ] || { log "no free port in 18180-18279"; exit 1; }
URL=http://127.0.0.1:$PORT

# ---- the machine ------------------------------------------------------------------------------
CORES=$(nproc)
CPU_MODEL=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
MEM_GIB=$(awk '/MemTotal/ {printf "%.1f", $2 / 1048576}' /proc/meminfo)
PG_VERSION=$(psql_ -d postgres -tAc 'SHOW server_version' | cut -d' ' -f1)
# BENCH_JAVA_HOME: the JDK that runs the service alone (the build, the load generator and the
# workers stay on the java on the PATH), to compare runtimes without changing the Java 17 target.
SERVICE_JAVA=java
if [ -n "${BENCH_JAVA_HOME:-}" ]; then
  SERVICE_JAVA=$BENCH_JAVA_HOME/bin/java
  [ -x "$SERVICE_JAVA" ] || { log "BENCH_JAVA_HOME has no bin/java: $BENCH_JAVA_HOME"; exit 1; }
fi
JVM_VERSION=$("$SERVICE_JAVA" -version 2>&1 | sed -n 2p)
JAVA_OPTS_=${BENCH_JAVA_OPTS-"-XX:+UseSerialGC -Xms32m -Xmx256m -XX:TrimNativeHeapInterval=5000"}
# The cache the first start writes as it stops; every start after it runs from it. A cache is
# only used by the same JDK with the same class path, which is why every start names the jar the
# same way, from the repository's root.
AOT_OPTS=
if [ "$AOT" = 1 ]; then
  AOT_OPTS="-XX:AOTCache=$APP/claimq.aot"
  rm -f "$APP/claimq.aot"
fi
# The README's environment for the service: two malloc arenas (BENCH_MALLOC_ARENA_MAX; empty: the
# C library's own choice).
ARENAS=${BENCH_MALLOC_ARENA_MAX-2}
NODE_VERSION=$(command -v node >/dev/null && node --version || echo none)
BOSS_NODE_VERSION=$([ "$PGBOSS" = 1 ] && "$BOSS_NODE" --version || echo none)
PYTHON_VERSION=$(command -v python3 >/dev/null && python3 --version | cut -d' ' -f2 || echo none)
GRAPHILE_VERSION=
[ "$GRAPHILE" = 0 ] || GRAPHILE_VERSION=$(sed -n 's/.*"version": "\(.*\)".*/\1/p' bench/graphile/node_modules/graphile-worker/package.json | head -n 1)
# Only when pg-boss runs: without it there is no package.json to read, and the failed read would
# end the script here (set -e, pipefail) without a word.
PGBOSS_VERSION=
if [ "$PGBOSS" = 1 ]; then
  PGBOSS_VERSION=$(sed -n 's/.*"version": "\(.*\)".*/\1/p' bench/pgboss/node_modules/pg-boss/package.json | head -n 1)
fi
CLK_TCK=$(getconf CLK_TCK)
PG_SETTINGS=$(psql_ -d postgres -tAc "SELECT string_agg(name || ' ' || current_setting(name), ', ' ORDER BY name)
  FROM pg_settings WHERE name IN ('shared_buffers', 'synchronous_commit', 'max_wal_size', 'fsync')")
MAX_CONN=$(psql_ -d postgres -tAc 'SHOW max_connections')
USED_CONN=$(psql_ -d postgres -tAc 'SELECT count(*) FROM pg_stat_activity')
# pgbench gets what connections are left, keeping 30 for the others on this server.
RAW_CAP=$((MAX_CONN - USED_CONN - 30)); [ "$RAW_CAP" -ge 8 ] || RAW_CAP=8

# ---- the database -----------------------------------------------------------------------------
psql_ -d postgres -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" >/dev/null
psql_ -d postgres -c "CREATE DATABASE \"$DB\"" >/dev/null
DB_CREATED=1
JDBC=jdbc:postgresql://$PGHOST_:$PGPORT_/$DB

start_service() {   # [JVM options of this start only]
  local since
  since=$(date +%s%3N)
  QUARKUS_HTTP_PORT=$PORT QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_DATASOURCE_JDBC_URL=$JDBC \
    QUARKUS_DATASOURCE_USERNAME=$PGUSER_ CLAIMQ_SCHEMA=$SCHEMA CLAIMQ_AUTH_KEYS=$KEYS \
    ${ARENAS:+env MALLOC_ARENA_MAX=$ARENAS} "$SERVICE_JAVA" $JAVA_OPTS_ "$@" -jar "$APP/quarkus-run.jar" >>"$WORK/service.log" 2>&1 &
  SVC_PID=$!
  loadgen start --url "$URL" --since-ms "$since" --timeout 60 >"$WORK/start.out" \
    || { tail -n 40 "$WORK/service.log" >&2; exit 1; }
}
# Stops the run with the service's last words when it is gone.
alive() {
  kill -0 "$SVC_PID" 2>/dev/null && return 0
  local rc=0; wait "$SVC_PID" || rc=$?
  SVC_PID=
  grep -v '^[[:space:]]*\(at \|\.\.\.\)' "$WORK/service.log" | tail -n 15 >&2
  log "the service exited (status $rc) during the run"
  exit 1
}
stop_service() {   # [tenths of a second to wait before KILL; 350]
  kill -TERM "$SVC_PID"
  for _ in $(seq 1 "${1:-350}"); do kill -0 "$SVC_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$SVC_PID" 2>/dev/null || true
  wait "$SVC_PID" 2>/dev/null || true
  SVC_PID=
}

# PARKED long-polls on the empty queue "parked", in the background, until unpark: "park yes"
# spreads their waits' ends evenly over PARK_WAIT, "park no" asks them all at once. unpark
# flags $1 unless every one was parked and none was answered other than 204.
park() {
  rm -f "$WORK/parked.done"
  bounded $((WARMUP + SECONDS_PER + 150)) java -Xss256k -cp "$WORK/loadgen" LoadGen park --url "$URL" \
    --threads "$PARKED" --queue parked --wait "$PARK_WAIT" --spread "$1" --seconds $((WARMUP + SECONDS_PER + 120)) \
    --until "$WORK/parked.done" >"$WORK/park.out" &
  park_pid=$!
}
unpark() {
  touch "$WORK/parked.done"
  wait "$park_pid" || true
  [ "$(kv "$(cat "$WORK/park.out")" parked)" = "$PARKED" ] && [ "$(kv "$(cat "$WORK/park.out")" errors)" = 0 ] \
    || { log "parked long-polls: $(cat "$WORK/park.out")"; flag "$1"; }
}
reset() { sql "TRUNCATE item, attempt, item_action RESTART IDENTITY"; }
# Pending items in queue "bench", numbered from $2. Then the table is settled as a live one would
# be (statistics, hint bits set, no autovacuum due) and the preload's WAL flushed, so that neither
# lands inside a measurement.
preload() {
  local count=$1 from=${2:-1}
  sql "INSERT INTO item (queue, dedupe_key, payload, max_attempts, enqueued_by)
       SELECT 'bench', 'p-' || g, jsonb_build_object('to', 'bench@example.com', 'n', g), 5, 'dev-agent'
       FROM generate_series($from, $from + $count - 1) g"
  settle
}
settle() { sql "VACUUM ANALYZE item"; sql "CHECKPOINT"; }
# The same without the VACUUM, for the aged-table figure: there only autovacuum may clean up.
fill() {
  sql "INSERT INTO item (queue, dedupe_key, payload, max_attempts, enqueued_by)
       SELECT 'bench', 'f-' || g, jsonb_build_object('to', 'bench@example.com', 'n', g), 5, 'dev-agent'
       FROM generate_series($2, $2 + $1 - 1) g"
  sql "ANALYZE item"; sql "CHECKPOINT"
}
pending() { sql "SELECT count(*) FROM item WHERE state = 'pending'"; }

RESULTS=$WORK/results
: >"$RESULTS"
record() { echo "$1 $2" >>"$RESULTS"; }     # figure value
flag() { echo "$1" >>"$WORK/flags"; }
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
# A fixed-rate run the service could not keep up with measures its queue, not a claim.
behind() {
  awk -v a="$(kv "$2" achieved_rate)" -v r="$LATENCY_RATE" 'BEGIN {exit !(a < 0.95 * r)}' \
    && { flag "$1"; log "$1: the service kept up only $(kv "$2" achieved_rate) of $LATENCY_RATE claims/s"; } || true
}

vmrss() { sed -n 's/^VmRSS: *\([0-9]*\).*/\1/p' "/proc/$SVC_PID/status"; }
# Eight processes of one reference worker (examples/workers), as a user runs them, against the
# no-op provider, draining a preloaded queue; the rate is the items done in the measured window
# (counted in the table), after the processes started and WARMUP more seconds.
ref_workers() {   # figure, command...
  local figure=$1 i d0 d1 t0 t1 pids=()
  shift
  reset; preload "$PRELOAD"
  for i in $(seq 1 8); do
    CLAIMQ_URL=$URL CLAIMQ_QUEUE=bench CLAIMQ_WORKER=ref-$i CLAIMQ_API_KEY=dev-worker-key \
      CLAIMQ_LEASE_SECONDS=600 CLAIMQ_WAIT_SECONDS=1 PROVIDER_URL=$PROVIDER_URL \
      "$@" >>"$WORK/$figure.log" 2>&1 &
    pids+=($!); echo $! >>"$WORK/children"
  done
  for _ in $(seq 1 600); do [ "$(sql "SELECT count(*) FROM item WHERE state = 'done'")" = 0 ] || break; sleep 0.1; done
  sleep "$WARMUP"
  d0=$(sql "SELECT count(*) FROM item WHERE state = 'done'"); t0=$(date +%s%N)
  sleep "$SECONDS_PER"
  d1=$(sql "SELECT count(*) FROM item WHERE state = 'done'"); t1=$(date +%s%N)
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  alive
  record "$figure" "$(awk -v d=$((d1 - d0)) -v t=$((t1 - t0)) 'BEGIN {print d / (t / 1e9)}')"
  [ "$(pending)" -gt 0 ] || flag "$figure"
  [ "$(sql "SELECT count(*) FROM item WHERE state NOT IN ('pending', 'sending', 'done')")" = 0 ] \
    || { log "$figure: items failed; see the worker's log"; flag "$figure"; }
}

PGB_VARS=(-D queue=bench -D 'payload={"to": "bench@example.com", "k": 0}' -D priority=0
  -D maxAttempts=5 -D defaultMaxAttempts=5 -D enqueuedBy=dev-agent -D worker=bench
  -D leaseSeconds=600 -D defaultLeaseSeconds=60
  -D externalRef=bench -D actor=dev-worker -D dupeKeys=1000 -D max=10 -D held=0
  -D 'tokens=["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10"]')
# Records pgbench's tps (times $4, the items per transaction, when given) as figure $1; a run
# cut short (a client aborted, e.g. on an empty queue) still counts, flagged. Its sessions have
# the service's settings that change a plan's cost (jit=off, as in application.properties).
pgbench_() {
  local figure=$1 clients=$2 script=$3 per=${4:-1} out tps threads=$(( $2 < CORES ? $2 : CORES ))
  out=$(PGOPTIONS="-c search_path=$SCHEMA,public -c jit=off" bounded $((SECONDS_PER + 60)) \
    "$PGBENCH" -h "$PGHOST_" -p "$PGPORT_" -U "$PGUSER_" -n -M prepared -c "$clients" \
    -j "$threads" -T "$SECONDS_PER" -f "$WORK/pgbench/$script" "${PGB_VARS[@]}" "$DB" 2>&1) \
    || { flag "$figure"; log "pgbench $script: $(grep -m1 error <<<"$out" || tail -n 1 <<<"$out")"; }
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")
  [ -n "$tps" ] || { echo "$out" | tail -n 5 >&2; log "pgbench $script gave no tps"; exit 1; }
  record "$figure" "$(awk -v t="$tps" -v p="$per" 'BEGIN {print t * p}')"
}


log "$MODE run: $RUNS runs, ${SECONDS_PER}s per figure after ${WARMUP}s warm-up, backlog $BACKLOG, port $PORT"
if [ "$WORKERS" = 1 ]; then
  if [ "$NODE_WORKER" = 1 ]; then
    node bench/workers/provider.mjs >"$WORK/provider.out" 2>&1 &
  else
    python3 examples/demo/provider.py >"$WORK/provider.out" 2>&1 &
  fi
  echo $! >>"$WORK/children"
  for _ in $(seq 1 100); do grep -q PROVIDER_URL= "$WORK/provider.out" && break; sleep 0.1; done
  PROVIDER_URL=$(sed -n 's/^PROVIDER_URL=//p' "$WORK/provider.out" | head -n 1)
  [ -n "$PROVIDER_URL" ] || { log "the provider did not start: $(cat "$WORK/provider.out")"; exit 1; }
fi
log "first start (migrates the schema, warms the page cache; not counted)"
if [ "$AOT" = 1 ]; then
  # The training run: the service as it starts and serves, the calls of the rows to come; as it
  # stops, the JVM writes the cache (a minute or so on 2 cores).
  log "BENCH_AOT=1: the first start is the AOT cache's training run"
  start_service "-XX:AOTCacheOutput=$APP/claimq.aot"
  loadgen enqueue --url "$URL" --warmup 0 --seconds 5 --threads 8 --run aot >/dev/null
  preload 20000 200000000
  loadgen drain --url "$URL" --warmup 0 --seconds 5 --threads 8 >/dev/null
  loadgen batch-drain --url "$URL" --warmup 0 --seconds 2 --threads 8 --max 10 >/dev/null
  alive
  reset
  stop_service 3000
  [ -s "$APP/claimq.aot" ] || { tail -n 20 "$WORK/service.log" >&2; log "the training run wrote no AOT cache"; exit 1; }
  JAVA_OPTS_="${JAVA_OPTS_:+$JAVA_OPTS_ }$AOT_OPTS"
else
  start_service
  stop_service
fi
sql "CREATE SEQUENCE public.bench_claim_ids"

for run in $(seq 1 "$RUNS"); do
  log "run $run/$RUNS: raw SQL (pgbench)"
  reset
  pgbench_ raw_enqueue "$CLIENTS" enqueue.sql
  reset
  sql "INSERT INTO item (queue, dedupe_key, payload, max_attempts, enqueued_by)
       SELECT 'bench', g::text, '{\"to\": \"bench@example.com\", \"k\": 0}', 5, 'dev-agent'
       FROM generate_series(1, 1000) g"
  settle
  pgbench_ raw_dupes "$CLIENTS" enqueue-duplicate.sql
  for n in "${DRAIN_WORKERS[@]}"; do
    c=$(( n < RAW_CAP ? n : RAW_CAP ))
    reset; preload "$PRELOAD"
    pgbench_ "raw_drain_$n" "$c" claim-complete.sql
    [ "$(pending)" -gt 0 ] || flag "raw_drain_$n"
    echo "$c" >"$WORK/raw_clients_$n"
  done
  # Complete with next: the one statement per item that the service runs for it.
  reset; preload "$PRELOAD"
  pgbench_ raw_next_8 8 complete-next.sql
  [ "$(pending)" -gt 0 ] || flag raw_next_8
  reset; preload "$PRELOAD"
  sql "SELECT setval('public.bench_claim_ids', 1, false)" >/dev/null
  pgbench_ raw_claim_by_id "$CLIENTS" claim-by-id.sql
  [ "$(pending)" -gt 0 ] || flag raw_claim_by_id
  if [ "$BATCH" = 1 ]; then   # claim 10 + complete 10: a transaction pair per ten items
    reset; preload "$PRELOAD"
    pgbench_ raw_batch 8 batch-claim-complete.sql 10
    [ "$(pending)" -gt 0 ] || flag raw_batch
  fi

  log "run $run/$RUNS: the service over HTTP"
  reset
  start_service; record start_ms "$(kv "$(cat "$WORK/start.out")" start_ms)"
  common=(--url "$URL" --pid "$SVC_PID" --clk-tck "$CLK_TCK" --warmup "$WARMUP" --seconds "$SECONDS_PER" --run "r$run")
  rss=0
  # The raw side has no JIT to warm: give the service its first compiles before any figure.
  half=$(( (SERVICE_WARMUP + 1) / 2 ))
  loadgen enqueue --url "$URL" --warmup 0 --seconds "$half" --threads 8 --run "w$run" >/dev/null
  preload "$PRELOAD" 100000000
  loadgen drain --url "$URL" --warmup 0 --seconds "$half" --threads 8 >/dev/null
  alive
  reset
  note() {   # figure prefix, LoadGen output
    alive
    record "$1" "$(kv "$2" rate)"
    local cpu r e
    cpu=$(kv "$2" cpu_ms_per_1000); [ -z "$cpu" ] || record "$1_cpu" "$cpu"
    r=$(kv "$2" rss_kb); [ -z "$r" ] || [ "$r" -le "$rss" ] || rss=$r
    e=$(kv "$2" errors); [ "${e:-0}" = 0 ] || { log "$1: $e errors, e.g. $(kv "$2" error_sample)"; flag "$1"; }
  }
  note svc_enqueue "$(loadgen enqueue "${common[@]}" --threads "$CLIENTS")"
  reset
  note svc_dupes "$(loadgen dupes "${common[@]}" --threads "$CLIENTS" --keys 1000 --queue dupes)"
  for n in "${DRAIN_WORKERS[@]}"; do
    reset; preload "$PRELOAD"
    note "svc_drain_$n" "$(loadgen drain "${common[@]}" --threads "$n")"
    [ "$(pending)" -gt 0 ] || flag "svc_drain_$n"
  done
  # One call per item: complete with "next" hands the worker its next item.
  reset; preload "$PRELOAD"
  out=$(loadgen complete-next "${common[@]}" --threads 8)
  if [ "$(kv "$out" skipped)" = 1 ]; then
    kv "$out" reason | tr _ ' ' >"$WORK/next_skipped"
  else
    note svc_next_8 "$out"
    [ "$(pending)" -gt 0 ] || flag svc_next_8
  fi
  reset; preload "$PRELOAD"
  note svc_claim_by_id "$(loadgen claim-by-id "${common[@]}" --threads "$CLIENTS" --from 1 --to "$PRELOAD")"
  [ "$(pending)" -gt 0 ] || flag svc_claim_by_id
  if [ "$BATCH" = 1 ]; then
    reset; preload "$PRELOAD"
    out=$(loadgen batch-drain "${common[@]}" --threads 8 --max 10)
    if [ "$(kv "$out" skipped)" = 1 ]; then
      echo "$(kv "$out" reason | tr _ ' ')" >"$WORK/batch_skipped"
    else
      note svc_batch "$out"
      [ "$(pending)" -gt 0 ] || flag svc_batch
      # Claim 100 + complete 100 on the backlog Graphile Worker's batched mode drains.
      reset; preload "$BIG_PRELOAD"
      note svc_batch100 "$(loadgen batch-drain "${common[@]}" --threads 8 --max 100)"
      [ "$(pending)" -gt 0 ] || flag svc_batch100
    fi
  fi
  # Drain speed on a table that has processed CHURN items (through the batch calls, so that it
  # takes minutes, not hours) against the same drain on a fresh table. Neither table is vacuumed
  # by hand: on the aged one, autovacuum alone must have kept the claim index lean.
  reset; fill "$PRELOAD" 1
  note svc_fresh_8 "$(loadgen drain "${common[@]}" --threads 8)"
  reset; fill "$CHURN" 1
  log "run $run/$RUNS: processing $CHURN items (aging the table)"
  out=$(bounded $((CHURN / 100 + 600)) java -cp "$WORK/loadgen" LoadGen process --url "$URL" --threads 8 --max 100)
  alive
  [ "$(kv "$out" errors)" = 0 ] && [ "$(pending)" = 0 ] || { log "processing the churn failed: $out"; exit 1; }
  record churn_rate "$(kv "$out" rate)"
  fill "$PRELOAD" $((CHURN + 1))
  note svc_aged_8 "$(loadgen drain "${common[@]}" --threads 8)"
  [ "$(pending)" -gt 0 ] || flag svc_aged_8
  # Claim latency at a fixed rate, on a small backlog and then on the large one.
  reset; preload "$SMALL_BACKLOG"
  out=$(loadgen latency "${common[@]}" --threads 32 --rate "$LATENCY_RATE")
  record lat_small_p50 "$(kv "$out" p50_ms)"; record lat_small_p99 "$(kv "$out" p99_ms)"
  behind lat_small_p50 "$out"
  log "run $run/$RUNS: filling the backlog to $BACKLOG"
  preload $((BACKLOG - $(pending))) $((SMALL_BACKLOG + 1))
  out=$(loadgen latency "${common[@]}" --threads 32 --rate "$LATENCY_RATE")
  record lat_big_p50 "$(kv "$out" p50_ms)"; record lat_big_p99 "$(kv "$out" p99_ms)"
  behind lat_big_p50 "$out"
  r=$(kv "$out" rss_kb); [ -z "$r" ] || [ "$r" -le "$rss" ] || rss=$r
  record rss_mb "$(awk -v k="$rss" 'BEGIN {printf "%.0f", k / 1024}')"
  # PARKED long-polls on an empty queue beside the 8-worker drain: the database connections they
  # keep busy, the service's RSS growth, and the drain's p99 against the same drain without them.
  # The target's row has their waits spread: each runs out and asks again at its own time,
  # PARKED / PARK_WAIT a second, as for idle workers that did not all start in the same second. The row
  # after it asks them all at once and times the drain so that their waits run out together in
  # the middle of its measured window: 2,000 answers and 2,000 new polls in a second or two (a
  # fleet started, or reconnected, at once).
  log "run $run/$RUNS: $PARKED parked long-polls beside the 8-worker drain"
  reset; preload "$PRELOAD"
  out=$(loadgen drain "${common[@]}" --threads 8)
  alive; record lp_base_p99 "$(kv "$out" p99_ms)"
  reset; preload "$PRELOAD"
  rss0=$(vmrss)
  park yes
  sleep 10   # every long-poll asked and parked (2,000 connections and threads on 2 cores)
  busy=0
  for _ in $(seq 1 20); do   # the busiest of 20 looks over 2 s; the service's idle pool is not held
    b=$(sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
             AND pid <> pg_backend_pid() AND state <> 'idle' AND backend_type = 'client backend'")
    [ "$b" -le "$busy" ] || busy=$b
    sleep 0.1
  done
  record lp_busy_conns "$busy"
  out=$(loadgen drain "${common[@]}" --threads 8)
  alive; record lp_p99 "$(kv "$out" p99_ms)"
  record lp_rss_growth_mb "$(awk -v a="$rss0" -v b="$(vmrss)" 'BEGIN {printf "%.0f", (b - a) / 1024}')"
  e=$(kv "$out" errors); [ "${e:-0}" = 0 ] || flag lp_p99
  unpark lp_busy_conns
  log "run $run/$RUNS: $PARKED long-polls whose waits run out together inside the drain"
  reset; preload "$PRELOAD"
  park no
  # Their waits began over the first second or two: the measured window's middle a second after
  # the first of them runs out.
  together=$((PARK_WAIT + 1 - WARMUP - SECONDS_PER / 2)); [ "$together" -ge 5 ] || together=5
  sleep "$together"
  out=$(loadgen drain "${common[@]}" --threads 8)
  alive; record lp_herd_p99 "$(kv "$out" p99_ms)"
  e=$(kv "$out" errors); [ "${e:-0}" = 0 ] || flag lp_herd_p99
  unpark lp_herd_p99
  if [ "$WORKERS" = 1 ]; then
    log "run $run/$RUNS: the reference workers (examples/workers)"
    [ "$PYTHON_WORKER" = 0 ] || ref_workers ref_python python3 examples/workers/worker.py
    [ "$NODE_WORKER" = 0 ] || ref_workers ref_node node examples/workers/worker.mjs
    ref_workers ref_java java -cp "$WORK/worker" Worker
  fi
  stop_service

  if [ "$PGBOSS" = 1 ]; then
    log "run $run/$RUNS: pg-boss"
    reset   # keep claimq's tables small while pg-boss runs
    pgboss() {
      bounded $((SECONDS_PER + WARMUP + 180)) "$BOSS_NODE" bench/pgboss/bench.mjs "$@" \
        --db "postgres://$PGUSER_@$PGHOST_:$PGPORT_/$DB" --warmup "$WARMUP" --seconds "$SECONDS_PER"
    }
    out=$(pgboss enqueue --clients "$CLIENTS"); record boss_enqueue "$(kv "$out" rate)"
    for n in 8 32; do
      out=$(pgboss drain --workers "$n" --preload "$PRELOAD"); record "boss_drain_$n" "$(kv "$out" rate)"
      [ "$(kv "$out" empty)" = 0 ] || flag "boss_drain_$n"
    done
  fi
  if [ "$GRAPHILE" = 1 ]; then
    log "run $run/$RUNS: Graphile Worker"
    reset
    for m in single batched; do
      n=$([ "$m" = single ] && echo "$PRELOAD" || echo "$BIG_PRELOAD")
      out=$(bounded $((SECONDS_PER + WARMUP + 600)) node bench/graphile/bench.mjs --mode "$m" \
        --db "postgres://$PGUSER_@$PGHOST_:$PGPORT_/$DB" --concurrency 8 --batch 500 --preload "$n" \
        --warmup "$WARMUP" --seconds "$SECONDS_PER")
      record "graphile_$m" "$(kv "$out" rate)"
      [ "$(kv "$out" errors)" = 0 ] || { log "graphile $m: $out"; flag "graphile_$m"; }
      # A backlog gone within the warm-up leaves an empty window: a 0 that measures nothing.
      [ "$(kv "$out" items)" != 0 ] || { log "graphile $m: the backlog of $n ran out during the warm-up"; flag "graphile_$m"; }
    done
  fi
done

# ---- the table --------------------------------------------------------------------------------
median() { awk -v k="$1" '$1 == k {print $2}' "$RESULTS" | sort -g \
  | awk '{v[NR] = $1} END {if (NR == 0) exit; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
range() { awk -v k="$1" '$1 == k {print $2}' "$RESULTS" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {if (NR) print lo, hi}'; }
num() { awk -v v="$1" -v d="${2:-0}" 'BEGIN {
  s = sprintf("%." d "f", v); split(s, p, "."); i = p[1]; o = ""
  while (length(i) > 3) { o = "," substr(i, length(i) - 2) o; i = substr(i, 1, length(i) - 3) }
  print i o (d > 0 ? "." p[2] : "") }'; }
dry() { grep -qx "$1" "$WORK/flags" 2>/dev/null && echo " (!)" || true; }
# "1,234 (1,100–1,300)": the median and, in brackets, the lowest and highest run.
cell() {
  local m lo hi d=${2:-0}
  m=$(median "$1"); [ -n "$m" ] || { echo "—"; return; }
  read -r lo hi <<<"$(range "$1")"
  echo "$(num "$m" "$d") ($(num "$lo" "$d")–$(num "$hi" "$d"))$(dry "$1")"
}
ratio() { local a b; a=$(median "$1"); b=$(median "$2")
  [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN {if (b > 0) printf "%.2f", a / b}'; }
# "met", or "**not met**" and how far off it is. A --quick run judges nothing: its rows are a
# smoke test.
verdict() {
  [ "$MODE" = full ] || { echo "not judged (smoke test)"; return; }
  awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN {
  if (v == "") { print "—"; exit } ok = (op == ">=") ? (v + 0 >= t + 0) : (v + 0 <= t + 0)
  if (ok) { print "met"; exit }
  if (t + 0 == 0) printf "**not met** (%s)\n", v
  else if (op == ">=") printf "**not met** (%.0f%% short)\n", 100 * (1 - v / t)
  else printf "**not met** (%.0f%% over)\n", 100 * (v / t - 1) }'; }
# The ratio of two medians as "0.57×", or "—".
x() { local r; r=$(ratio "$1" "$2"); echo "${r:-—}$([ -z "$r" ] || echo ×)"; }

R_ENQ=$(ratio svc_enqueue raw_enqueue)
FIG=Figure
if [ "$MODE" = quick ]; then
  FIG="Row (smoke test: not a figure)"
  cat <<EOF
## Smoke test (\`bench/run.sh --quick\`): these are not figures

One short run per row, 1 s after 1 s of warm-up, with a cold JIT and small backlogs: it shows
that every row runs end to end. Its rates and ratios fall far below a full run's (a service whose
JIT has barely started), so they are not judged against the targets. Figures come only from
\`bench/run.sh\` without \`--quick\`.

EOF
fi
cat <<EOF
Machine: $CORES cores ($CPU_MODEL), $MEM_GIB GiB memory; PostgreSQL $PG_VERSION ($PG_SETTINGS); $JVM_VERSION, service started with \`${ARENAS:+MALLOC_ARENA_MAX=$ARENAS }java ${JAVA_OPTS_:+$JAVA_OPTS_ }-jar\`$([ "$AOT" = 1 ] && echo " (aot-jar packaging; the AOT cache written by the benchmark's first start, its training run)"); Node.js $NODE_VERSION (Graphile Worker ${GRAPHILE_VERSION:-none}, the Node.js reference worker), Node.js $BOSS_NODE_VERSION (pg-boss ${PGBOSS_VERSION:-none}); Python $PYTHON_VERSION.
Run: \`bench/run.sh$([ "$MODE" = quick ] && echo " --quick")\`, $(date -u +%Y-%m-%d); median of $RUNS run$([ "$RUNS" = 1 ] || echo s) (lowest–highest in brackets); each figure ${SECONDS_PER} s after ${WARMUP} s warm-up; rates in items/s. claimq's figures include HTTP and the load generator, on the same cores; the peers run in-process, with no HTTP, talking to PostgreSQL directly.

| $FIG | claimq | Compared with | Ratio | Target |
|---|---|---|---|---|
| Enqueue, $CLIENTS clients | $(cell svc_enqueue) | raw SQL $(cell raw_enqueue) | ${R_ENQ:-—}× | ≥ 0.6× raw: $(verdict "$R_ENQ" 0.6 ">=") |
| Duplicate-enqueue storm (replays of 1,000 keys), $CLIENTS clients | $(cell svc_dupes) | raw SQL $(cell raw_dupes) | $(x svc_dupes raw_dupes) | — |
EOF
for n in "${DRAIN_WORKERS[@]}"; do
  r=$(ratio "svc_drain_$n" "raw_drain_$n"); c=$(cat "$WORK/raw_clients_$n")
  t="—"; case $n in 8|32) t="≥ 0.7× raw: $(verdict "$r" 0.7 ">=")" ;; esac
  echo "| Claim-next + complete, $n worker$([ "$n" = 1 ] || echo s) | $(cell "svc_drain_$n") | raw SQL$([ "$c" = "$n" ] || echo " ($c clients)") $(cell "raw_drain_$n") | ${r:-—}× | $t |"
done
if [ -f "$WORK/next_skipped" ]; then
  echo "| With next, one call per item, 8 workers | skipped: $(cat "$WORK/next_skipped") (complete with \`next\` not in this build) | raw SQL, two statements $(cell raw_drain_8) | — | ≥ 1.0× raw |"
else
  r=$(ratio svc_next_8 raw_drain_8)
  echo "| With next, one call per item, 8 workers | $(cell svc_next_8) | raw SQL, two statements $(cell raw_drain_8) | ${r:-—}× | ≥ 1.0× raw: $(verdict "$r" 1.0 ">=") |"
  echo "| With next, against raw SQL of its own statement (complete-held-claim-next), 8 workers | $(cell svc_next_8) | raw SQL, one statement $(cell raw_next_8) | $(x svc_next_8 raw_next_8) | — |"
fi
echo "| Claim by id, $CLIENTS clients | $(cell svc_claim_by_id) | raw SQL $(cell raw_claim_by_id) | $(x svc_claim_by_id raw_claim_by_id) | — |"
if [ "$BATCH" = 0 ]; then
  echo "| Batch drain (claim 10 + complete 10), 8 workers | not run (--no-batch) | — | — | ≥ 0.9× raw |"
elif [ -f "$WORK/batch_skipped" ]; then
  echo "| Batch drain (claim 10 + complete 10), 8 workers | skipped: $(cat "$WORK/batch_skipped") (batch endpoints not in this build) | — | — | ≥ 0.9× raw |"
else
  r=$(ratio svc_batch raw_batch)
  echo "| Batch drain (claim 10 + complete 10), 8 workers | $(cell svc_batch) | raw SQL $(cell raw_batch) | ${r:-—}× | ≥ 0.9× raw: $(verdict "$r" 0.9 ">=") |"
fi
# The peers: claimq over HTTP ÷ each one in-process, same concurrency (8), same backlog size.
if [ "$GRAPHILE" = 1 ]; then
  r=$(ratio svc_drain_8 graphile_single)
  echo "| Drain vs Graphile Worker unbatched, 8 workers, backlog $(num "$PRELOAD") (claimq: claim-next + complete) | $(cell svc_drain_8) | Graphile Worker $(cell graphile_single) | ${r:-—}× | ≥ 1.0×: $(verdict "$r" 1.0 ">=") |"
  r=$(ratio svc_batch100 graphile_batched)
  echo "| Drain vs Graphile Worker batched, 8 workers, backlog $(num "$BIG_PRELOAD") (claimq: claim 100 + complete 100; Graphile Worker: localQueue 500, completeJobBatchDelay 0) | $(cell svc_batch100) | Graphile Worker $(cell graphile_batched) | ${r:-—}× | ≥ 1.0×: $(verdict "$r" 1.0 ">=") |"
else
  echo "| Drain vs Graphile Worker | not run (Node.js 20 or npm missing, or --no-graphile) | — | — | ≥ 1.0×, unbatched and batched |"
fi
if [ "$PGBOSS" = 1 ]; then
  for n in 8 32; do
    r=$(ratio "svc_drain_$n" "boss_drain_$n")
    echo "| Drain vs pg-boss (fetch + complete), $n workers, backlog $(num "$PRELOAD") | $(cell "svc_drain_$n") | pg-boss $(cell "boss_drain_$n") | ${r:-—}× | ≥ 2× pg-boss: $(verdict "$r" 2 ">=") |"
  done
  echo "| Enqueue vs pg-boss (send), $CLIENTS clients | $(cell svc_enqueue) | pg-boss $(cell boss_enqueue) | $(x svc_enqueue boss_enqueue) | — |"
else
  echo "| Drain vs pg-boss | not run (npm or Node.js 22 missing, or --no-pgboss) | — | — | ≥ 2× pg-boss |"
fi
if [ "$WORKERS" = 1 ]; then
  for w in "python|Python|examples/workers/worker.py" "node|Node.js|examples/workers/worker.mjs" \
      "java|Java|examples/workers/Worker.java (java.net.http.HttpClient)"; do
    IFS='|' read -r k name what <<<"$w"
    if [ -n "$(median "ref_$k")" ]; then
      echo "| Reference $name worker: 8 processes of $what, one item at a time each, no-op provider | $(cell "ref_$k") | claim-next + complete, 8 workers $(cell svc_drain_8) | $(x "ref_$k" svc_drain_8) | — |"
    else
      echo "| Reference $name worker | not run ($([ "$k" = python ] && echo python3 || echo node) missing) | — | — | — |"
    fi
  done
else
  echo "| Reference workers | not run (--no-workers) | — | — | — |"
fi
R_AGED=$(ratio svc_aged_8 svc_fresh_8)
echo "| Batch drain (claim 100 + complete 100), 8 workers, working off $(num "$CHURN") items | $(cell churn_rate) | — | — | — |"
echo "| Claim-next + complete, 8 workers, after $(num "$CHURN") processed items (no VACUUM by the benchmark) | $(cell svc_aged_8) | fresh table $(cell svc_fresh_8) | ${R_AGED:-—}× | ≥ 0.8× fresh: $(verdict "$R_AGED" 0.8 ">=") |"
P99=$(median lat_big_p99)
FLAT=$(ratio lat_big_p50 lat_small_p50)
FLAT_VERDICT=$(verdict "$FLAT" 1.25 "<=")
if [ -n "$(dry lat_big_p50)$(dry lat_small_p50)" ]; then FLAT_VERDICT="not measured (the service fell behind)"; fi
LP_CHANGE=$(awk -v a="$(median lp_p99)" -v b="$(median lp_base_p99)" 'BEGIN {if (a != "" && b > 0) printf "%.0f", 100 * (a / b - 1)}')
LP_SHOWN=—; [ -z "$LP_CHANGE" ] || LP_SHOWN="$([ "$LP_CHANGE" -lt 0 ] || echo +)$LP_CHANGE%"
LP_CONN=$(median lp_busy_conns); LP_RSS=$(median lp_rss_growth_mb)
HERD=$(awk -v a="$(median lp_herd_p99)" -v b="$(median lp_base_p99)" 'BEGIN {if (a != "" && b > 0) printf "%+.0f%%", 100 * (a / b - 1)}')
cat <<EOF
| Claim latency at $LATENCY_RATE claims/s, backlog $(num "$BACKLOG"): p50 / p99 (ms) | $(cell lat_big_p50 2) / $(cell lat_big_p99 2) | — | — | p99 ≤ 10 ms: $(verdict "$P99" 10 "<=") |
| Claim latency at $LATENCY_RATE claims/s, backlog $(num "$SMALL_BACKLOG"): p50 / p99 (ms) | $(cell lat_small_p50 2) / $(cell lat_small_p99 2) | — | — | — |
| Claim cost, backlog $(num "$SMALL_BACKLOG") → $(num "$BACKLOG") (p50 ÷ p50) | ${FLAT:-—}× | p99 ÷ p99: $(x lat_big_p99 lat_small_p99) | — | flat (≤ 1.25×): $FLAT_VERDICT |
| $(num "$PARKED") parked long-polls beside the 8-worker drain, their $PARK_WAIT s waits running out at their own times: database connections they keep busy, RSS growth (MB), drain p99 (ms, claim + complete) | $(cell lp_busy_conns) connections; +$(cell lp_rss_growth_mb) MB; p99 $(cell lp_p99 2) | p99 without them $(cell lp_base_p99 2) | p99 $LP_SHOWN | 0 connections: $(verdict "$LP_CONN" 0 "<="); RSS +≤ 50 MB: $(verdict "$LP_RSS" 50 "<="); p99 +≤ 20%: $(verdict "$LP_CHANGE" 20 "<=") |
| The same $(num "$PARKED") asked at once, their waits running out together in the middle of the drain's measured window: drain p99 (ms) | p99 $(cell lp_herd_p99 2) | p99 without them $(cell lp_base_p99 2) | p99 ${HERD:-—} | — |
| Service CPU per 1,000 items: claim-next + complete, 8 workers (ms) | $(cell svc_drain_8_cpu) | enqueue: $(cell svc_enqueue_cpu) | — | — |
| Service RSS under load (MB, VmRSS, highest seen) | $(cell rss_mb) | — | — | ≤ 200 MB: $(verdict "$(median rss_mb)" 200 "<=") |
| JVM start to first served request (ms) | $(cell start_ms) | — | — | ≤ 2,000 ms: $(verdict "$(median start_ms)" 2000 "<=") |
EOF
if [ -s "$WORK/flags" ]; then
  echo
  echo "(!) in at least one run: the queue ran dry or requests failed (raise --preload, or see the log), or, on a latency row, the service fell behind the fixed rate, so that row measures its queue."
fi
log "done; database $DB dropped, service stopped"
