#!/usr/bin/env bash
# The claimq demo, against a running service (CLAIMQ_URL, default http://localhost:8080):
# enqueue ten sends (and one duplicate, answered with the same item by its dedupe key), lose a claim race quietly, drain
# the queue with a Python and a Node worker at once, watch a failing send retry up to its cap and
# an operator retry it, stop the workers with SIGTERM, then prove from the provider's record and
# claimq's API that every item was sent exactly once. Needs bash, curl, python3 and node.
#
#   examples/demo.sh          # last line: "demo: 12 items, 12 sent exactly once, 0 duplicates: OK"
#
# API keys, sent as "Authorization: Bearer": CLAIMQ_AGENT_KEY (enqueue), CLAIMQ_WORKER_KEY
# (claim and finish), CLAIMQ_OPERATOR_KEY (list, attempts, retry); dev keys by default.
set -uo pipefail
cd "$(dirname "$0")"

url=${CLAIMQ_URL:-http://localhost:8080}
url=${url%/}
agent_key=${CLAIMQ_AGENT_KEY:-dev-agent-key}
worker_key=${CLAIMQ_WORKER_KEY:-dev-worker-key}
operator_key=${CLAIMQ_OPERATOR_KEY:-dev-operator-key}
queue="demo-$(date +%s)-$$" # a fresh queue, so the demo can run again and again
batch_size=10

tmp=$(mktemp -d)
children=()
cleanup() {
  for pid in ${children[@]+"${children[@]}"}; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n== %s\n' "$*"; }
fail() { echo "demo: $*: FAILED"; exit 1; }

# call KEY METHOD PATH [BODY]: prints the HTTP status; body in $tmp/answer, headers in $tmp/headers.
call() {
  curl -s -o "$tmp/answer" -D "$tmp/headers" -w '%{http_code}' --max-time 10 -X "$2" \
    -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
    ${4:+--data-binary "$4"} "$url$3" || true
}
# field NAME [FILE]: one top-level field of a JSON answer.
field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[2]))[sys.argv[1]])' "$1" "${2:-$tmp/answer}"; }
enqueue() { call "$agent_key" POST "/v1/queues/$queue/items" "$1"; }
item_state() { call "$operator_key" GET "/v1/items/$1" >/dev/null && field state; }
# wait_until SECONDS COMMAND...: polls every half second; false if time ran out.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -lt "$deadline" ] || return 1; sleep 0.5; done
}

curl -sf --max-time 5 "$url/q/health/ready" >/dev/null || fail "claimq does not answer at $url"

step "A fake provider that records every send by its Idempotency-Key"
python3 demo/provider.py > "$tmp/provider.out" &
children+=($!)
wait_until 10 grep -q PROVIDER_URL= "$tmp/provider.out" || fail "the provider did not start"
provider_url=$(sed -n 's/^PROVIDER_URL=//p' "$tmp/provider.out")
echo "provider: $provider_url"

step "An agent enqueues $batch_size sends into queue $queue"
for n in $(seq 1 "$batch_size"); do
  status=$(enqueue "{\"dedupeKey\": \"welcome/$n\", \"payload\": {\"to\": \"user-$n@example.com\", \"sleepSeconds\": 0.2}}")
  [ "$status" = 201 ] || fail "enqueue welcome/$n answered $status: $(cat "$tmp/answer")"
  printf 'welcome/%s -> 201, item %s\n' "$n" "$(field id)"
done
first_id=$(call "$operator_key" GET "/v1/items?queue=$queue&limit=500" >/dev/null; python3 -c \
  'import json, sys; print(min(json.load(open(sys.argv[1]))["items"], key=lambda i: int(i["id"]))["id"])' "$tmp/answer")

step "The agent says welcome/1 again: same item, nothing new"
status=$(enqueue '{"dedupeKey": "welcome/1", "payload": {"to": "user-1@example.com", "sleepSeconds": 0.2}}')
replayed=$(tr -d '\r' < "$tmp/headers" | sed -n 's/^[Ii]dempotent-[Rr]eplayed: //p')
echo "welcome/1 -> $status, Idempotent-Replayed: $replayed, item $(field id)"
[ "$status" = 200 ] && [ "$replayed" = true ] && [ "$(field id)" = "$first_id" ] \
  || fail "the duplicate was not answered as a replay"

step "A send whose provider is down: 503 with Retry-After: 1, at most 2 attempts"
status=$(enqueue '{"dedupeKey": "flaky/1", "maxAttempts": 2, "payload": {"to": "flaky@example.com", "failTimes": 2, "retryAfter": 1}}')
[ "$status" = 201 ] || fail "enqueue flaky/1 answered $status"
flaky_id=$(field id)
echo "flaky/1 -> 201, item $flaky_id"

step "Two claims race for one item: one wins, the other gets a quiet 204"
enqueue '{"dedupeKey": "race/1", "payload": {"to": "race@example.com"}}' >/dev/null
race_id=$(field id)
for racer in racer-a racer-b; do
  curl -s -o "$tmp/$racer" -w '%{http_code}' --max-time 10 -X POST "$url/v1/items/$race_id/claim" \
    -H "Authorization: Bearer $worker_key" -H 'Content-Type: application/json' \
    --data-binary "{\"worker\": \"$racer\"}" > "$tmp/$racer.status" &
done
wait_until 15 test -s "$tmp/racer-a.status" -a -s "$tmp/racer-b.status" || fail "the race did not end"
echo "racer-a -> $(cat "$tmp/racer-a.status"), racer-b -> $(cat "$tmp/racer-b.status")"
statuses="$(cat "$tmp/racer-a.status") $(cat "$tmp/racer-b.status")"
case $statuses in
  "200 204") claim=$tmp/racer-a ;;
  "204 200") claim=$tmp/racer-b ;;
  *) fail "expected one 200 and one 204, got $statuses" ;;
esac
# The winner does what every worker does: send with the idempotency key, then complete.
curl -s -o "$tmp/race_sent" --max-time 10 -X POST "$provider_url" -H 'Content-Type: application/json' \
  -H "Idempotency-Key: $(field idempotencyKey "$claim")" --data-binary '{"to": "race@example.com"}'
status=$(call "$worker_key" POST "/v1/items/$race_id/complete" \
  "{\"claimToken\": \"$(field claimToken "$claim")\", \"externalRef\": \"$(field id "$tmp/race_sent")\"}")
echo "$(basename "$claim") sent it and completed it -> $status, state $(field state)"

step "Two workers, Python and Node, drain the queue at the same time"
export CLAIMQ_URL="$url" CLAIMQ_QUEUE="$queue" CLAIMQ_API_KEY="$worker_key" PROVIDER_URL="$provider_url"
export CLAIMQ_WAIT_SECONDS=2 CLAIMQ_LEASE_SECONDS=10
python3 workers/worker.py --worker py-1 &
python_worker=$!
children+=($python_worker)
node workers/worker.mjs --worker node-1 &
node_worker=$!
children+=($node_worker)

is_failed() { [ "$(item_state "$flaky_id")" = failed ]; }
wait_until 30 is_failed || fail "flaky/1 did not end failed (state $(item_state "$flaky_id"))"
step "flaky/1 used both attempts and waits, failed, for a human. Its history:"
call "$operator_key" GET "/v1/items/$flaky_id/attempts" >/dev/null
python3 -c 'import json, sys
for a in json.load(open(sys.argv[1]))["attempts"]:
    print("  attempt %(attempt)s by %(worker)s: %(outcome)s (%(error)s)" % a)' "$tmp/answer"

step "The provider is back; an operator retries flaky/1"
status=$(call "$operator_key" POST "/v1/items/$flaky_id/retry")
echo "POST /v1/items/$flaky_id/retry -> $status, state $(field state)"
[ "$status" = 200 ] || fail "the operator's retry answered $status"

all_done() {
  call "$operator_key" GET "/v1/items?queue=$queue&limit=500" >/dev/null
  python3 -c 'import json, sys; sys.exit(any(i["state"] != "done" for i in json.load(open(sys.argv[1]))["items"]))' "$tmp/answer"
}
wait_until 30 all_done || fail "the queue did not drain"

step "Every item is done; SIGTERM stops both workers cleanly"
kill -TERM "$python_worker" "$node_worker"
wait "$python_worker"; python_exit=$?
wait "$node_worker"; node_exit=$?
echo "py-1 exited $python_exit, node-1 exited $node_exit"
[ "$python_exit" = 0 ] && [ "$node_exit" = 0 ] || fail "a worker did not stop cleanly"

step "The proof: the provider's record against claimq's items and their attempts"
curl -s --max-time 10 "${provider_url%/sends}/sends" > "$tmp/sends"
call "$operator_key" GET "/v1/items?queue=$queue&limit=500" >/dev/null
cp "$tmp/answer" "$tmp/items"
for id in $(python3 -c 'import json, sys; print(" ".join(i["id"] for i in json.load(open(sys.argv[1]))["items"]))' "$tmp/items"); do
  call "$operator_key" GET "/v1/items/$id/attempts" >/dev/null
  cp "$tmp/answer" "$tmp/attempts-$id"
done
python3 - "$tmp" <<'PY'
import collections, glob, json, os, sys
tmp = sys.argv[1]
items = json.load(open(os.path.join(tmp, "items")))["items"]
accepted = {s["idempotencyKey"]: s["accepted"] for s in json.load(open(os.path.join(tmp, "sends")))["sends"]}
by_worker, once, duplicates = collections.Counter(), 0, 0
for item in items:
    attempts = json.load(open(os.path.join(tmp, "attempts-" + item["id"])))["attempts"]
    done = [a for a in attempts if a["outcome"] == "done"]
    sends = accepted.get(item["idempotencyKey"], 0)
    duplicates += max(0, sends - 1)
    if item["state"] == "done" and sends == 1 and len(done) == 1:
        once += 1
        by_worker[done[0]["worker"]] += 1
    else:
        print("  item %s (%s): %s, provider accepted %d, %d done attempts"
              % (item["id"], item["dedupeKey"], item["state"], sends, len(done)))
print("sent by: " + ", ".join("%s %d" % kv for kv in sorted(by_worker.items())))
ok = once == len(items) and duplicates == 0 and len(accepted) == len(items)
print("demo: %d items, %d sent exactly once, %d duplicates: %s"
      % (len(items), once, duplicates, "OK" if ok else "FAILED"))
sys.exit(0 if ok else 1)
PY
