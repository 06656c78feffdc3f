#!/usr/bin/env bash
# A claimq worker in bash and curl: the protocol of openapi/worker-protocol.md, end to end.
# Replace send() with your own side effect, and already_sent() with asking your provider by
# idempotency key. Uses jq when installed; without it, reads claimq's JSON with awk (exact for
# claimq's answers; the demo provider's id is read loosely).
#
#   worker.sh --queue emails [--url http://localhost:8080] [--worker mailer-1] [--api-key KEY]
#             [--lease-seconds 60] [--wait-seconds 20] [--exit-when-empty]
#
# Every flag also reads an env var: CLAIMQ_URL, CLAIMQ_QUEUE, CLAIMQ_WORKER, CLAIMQ_API_KEY,
# CLAIMQ_LEASE_SECONDS, CLAIMQ_WAIT_SECONDS, CLAIMQ_EXIT_WHEN_EMPTY=1 (CLAIMQ_NO_JQ=1 forces the
# awk fallback). With PROVIDER_URL set, the demo send POSTs the payload there (and already_sent()
# asks GET $PROVIDER_URL/<key>); without it, it only logs. An item's traceparent (the agent's
# trace) goes along as the traceparent header on the calls to the provider and on complete and
# fail. SIGTERM or SIGINT: finish the item in hand, then exit 0.
set -uo pipefail

url=${CLAIMQ_URL:-http://localhost:8080}
queue=${CLAIMQ_QUEUE:-}
worker=${CLAIMQ_WORKER:-$(hostname)-$$}
api_key=${CLAIMQ_API_KEY:-}
lease_seconds=${CLAIMQ_LEASE_SECONDS:-60}
wait_seconds=${CLAIMQ_WAIT_SECONDS:-20}
exit_when_empty=${CLAIMQ_EXIT_WHEN_EMPTY:-0}
while [ $# -gt 0 ]; do
  case $1 in
    --url) url=$2; shift ;;
    --queue) queue=$2; shift ;;
    --worker) worker=$2; shift ;;
    --api-key) api_key=$2; shift ;;
    --lease-seconds) lease_seconds=$2; shift ;;
    --wait-seconds) wait_seconds=$2; shift ;;
    --exit-when-empty) exit_when_empty=1 ;;
    *) echo "worker.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$queue" ] || { echo "worker.sh: --queue or CLAIMQ_QUEUE is required" >&2; exit 2; }
url=${url%/}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Only set a flag: bash runs the trap after the current curl returns, so the item in hand is
# finished and the loop then ends normally. The curls of the send and of claimq() ignore the
# signals themselves, so that one sent to the whole process group does not cut them short.
stopping=0
trap 'stopping=1' TERM INT

# The API key and the claim token in hand are never written to the log, whoever echoes them.
claim_token=
log() {
  local line="$*"
  [ -n "$api_key" ] && line=${line//"$api_key"/<redacted>}
  [ -n "$claim_token" ] && line=${line//"$claim_token"/<redacted>}
  printf '%s: %s\n' "$worker" "$line"
}

# Fields of a claimed item (file $2). Without jq, json_field reads claimq's JSON as JSON: a
# field is found by name at the top level, whatever the order of the fields, whatever else the
# answer holds (a field this worker does not know, a payload with a "claimToken" of its own).
if command -v jq >/dev/null && [ "${CLAIMQ_NO_JQ:-0}" != 1 ]; then
  item_field() { if [ "$1" = payload ]; then jq -c .payload "$2"; else jq -r ".$1 // empty" "$2"; fi; }
  provider_ref() { jq -r '.id // empty' "$1" 2>/dev/null; }
  # An intent's or a heartbeat's alreadySent (file $1), as "attempt externalRef" with the
  # reference as raw JSON; nothing when there is none.
  already_sent_in() {
    jq -r 'if .alreadySent then "\(.alreadySent.attempt) \(.alreadySent.externalRef | tojson)"
           else empty end' "$1" 2>/dev/null
  }
else
  # The raw JSON of the top-level field $1 of the object in file $2 (a string with its quotes
  # and escapes), or nothing. Walks the text once, skipping strings (escaped quotes included)
  # and counting brackets, so only the object's own fields are seen.
  json_field() {
    LC_ALL=C awk -v want="$1" '
      { text = text $0 "\n" }
      END {
        n = length(text)
        for (i = 1; i <= n; i++) {
          c = substr(text, i, 1)
          if (in_string) {
            if (c == "\\") i++
            else if (c == "\"") {
              in_string = 0
              if (naming) { key = substr(text, start + 1, i - start - 1); naming = 0 }
            }
          } else if (c == "\"") {
            in_string = 1; start = i
            if (depth == 1 && wants_key) { naming = 1; wants_key = 0 }
          } else if (c == "{" || c == "[") {
            if (++depth == 1) wants_key = (c == "{")
          } else if (c == ":" && depth == 1) {
            if (key == want) from = i + 1
          } else if (c == "," || c == "}" || c == "]") {
            if (depth == 1 && from) {
              value = substr(text, from, i - from)
              gsub(/^[ \t\r\n]+|[ \t\r\n]+$/, "", value)
              print value; exit
            }
            if (c == ",") { if (depth == 1) wants_key = 1 } else depth--
          }
        }
      }' "$2"
  }
  # A string field's text (claimq's ids, tokens, keys, states and traceparents need no
  # unescaping), nothing for null or absent; the payload and possiblySent as raw JSON.
  item_field() {
    case $1 in
      payload|possiblySent) json_field "$1" "$2" ;;
      *) json_field "$1" "$2" | sed -nE 's/^"(.*)"$/\1/p' ;;
    esac
  }
  provider_ref() { sed -nE 's/.*"id": *("([^"]*)"|(-?[0-9][-+.eE0-9]*)).*/\2\3/p' "$1"; }
  already_sent_in() {
    local sent attempt
    sent=$(json_field alreadySent "$1")
    [ "${sent:0:1}" = "{" ] || return 0
    attempt=$(json_field attempt <(printf '%s' "$sent"))
    printf '%s %s\n' "$attempt" "$(json_field externalRef <(printf '%s' "$sent"))"
  }
fi

json_string() { printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g')"; }

# The first 500 bytes of file $1 with what is not UTF-8 dropped, a character cut in half at the
# end included: claimq refuses a reason that is not valid UTF-8. (iconv -c says so on stderr.)
# Without iconv, every byte outside ASCII goes.
if command -v iconv >/dev/null; then
  excerpt() { head -c 500 "$1" | iconv -c -f UTF-8 -t UTF-8 2>/dev/null; }
else
  excerpt() { head -c 500 "$1" | LC_ALL=C tr -d '\200-\377'; }
fi

# The Retry-After in response headers on stdin as claimq takes it: whole seconds, at most 86400
# (however many digits the provider sent); nothing for an HTTP-date or garbage, so that claimq's
# own backoff applies.
retry_after_seconds() {
  tr -d '\r' | sed -nE 's/^[Rr]etry-[Aa]fter: *0*([0-9]+) *$/\1/p' | head -n 1 |
    { read -r seconds && { [ "${#seconds}" -gt 5 ] || [ "$seconds" -gt 86400 ]; } && echo 86400 || echo "${seconds:-}"; }
}

# Sets now to the time in microseconds, without a subshell (the heartbeat loop asks ten times a
# second). The decimal point may be a comma in some locales.
clock_now() {
  now=${EPOCHREALTIME:-$SECONDS.000000}
  now=${now/[.,]/}
  now=$(( 10#$now ))
}

# claimq PATH BODY [TIMEOUT [TRACEPARENT]]: sets answered to the HTTP status (000: no answer);
# the body lands in $tmp/answer. An answer cut off mid-body is no answer: curl still reports its
# status (200, say), but what arrived may lack a field, such as an intent's alreadySent, that
# was in the part lost. So any failure of curl's is 000.
# Called outside $(...), whose subshell would drop this shell's trap. curl runs in a subshell
# that ignores SIGTERM and SIGINT, so a signal to the whole process group (see the send) lets an
# intent, a heartbeat, a complete or a fail in flight be answered. A claim is not shielded: a
# signal ends the wait for work at once (an item claimed in that instant waits out its lease).
claimq() {
  local headers=() on_signal=''
  [ -n "$api_key" ] && headers=(-H "Authorization: Bearer $api_key")
  [ -n "${4:-}" ] && headers+=(-H "traceparent: $4")
  [ "$1" = "/v1/queues/$queue/claim" ] && on_signal=-
  : > "$tmp/answer" # an answer with no body must not leave the last one's in place
  answered=$(trap "$on_signal" TERM INT; exec curl -s -o "$tmp/answer" -w '%{http_code}' \
    --max-time "${3:-10}" -X POST -H 'Content-Type: application/json' \
    ${headers[@]+"${headers[@]}"} --data-binary "$2" "$url$1" 2>/dev/null) || answered=000
  [ -n "$answered" ] || answered=000
}

# Full jitter: a random delay up to 0.5s * 2^attempt (capped at 30s), so restarted workers spread out.
backoff() {
  local ceiling_ms=$(( 500 * (1 << $1) )); [ "$ceiling_ms" -gt 30000 ] && ceiling_ms=30000
  local ms=$(( (RANDOM * 32768 + RANDOM) % ceiling_ms ))
  printf '%d.%03d' $((ms / 1000)) $((ms % 1000))
}

# complete and fail are repeat-safe, so a lost answer is simply asked again, for long enough
# (about a minute and a half) to outlast a claimq restart. The last status is left in $finished
# (000: gave up) rather than printed, so that this runs outside $(...) and its log lines are logged.
# finish PATH BODY [TRACEPARENT]
finish() {
  local attempt delay tries=10
  for (( attempt = 1; ; attempt++ )); do
    claimq "$1" "$2" 10 "${3:-}"; finished=$answered
    case $finished in
      000|5??)
        if [ "$attempt" -ge "$tries" ]; then
          log "$1: answered $finished; gave up after $tries tries, the lease will release the item"
          finished=000; return
        fi
        delay=$(backoff "$attempt"); log "$1: answered $finished; again in ${delay}s"; sleep "$delay" ;;
      *) return ;;
    esac
  done
}

# Percent-encodes $1 byte by byte, for one segment of a URL's path.
urlencode() {
  local LC_ALL=C text=$1 encoded= c i
  for (( i = 0; i < ${#text}; i++ )); do
    c=${text:i:1}
    case $c in
      [A-Za-z0-9._~-]) encoded+=$c ;;
      *) printf -v c '%%%02X' "'$c"; encoded+=$c ;;
    esac
  done
  printf '%s' "$encoded"
}

# The agent's trace, when the item in $tmp/item carries one: continued by each call made for it.
trace_header() {
  local traceparent
  traceparent=$(item_field traceparent "$tmp/item")
  trace=(); [ -n "$traceparent" ] && trace=(-H "traceparent: $traceparent")
}

# The side effect, reading the claimed item in $tmp/item. Always pass the idempotencyKey to the
# provider: if this item is ever sent twice (a stale worker, a crash before complete), the
# provider makes it one send. Writes $tmp/detail (the provider's reference, or the reason),
# $tmp/retry_after and, last, $tmp/outcome (done, retry, permanent, or unknown: retry, but the
# provider may have acted): a send cut short leaves no outcome.
send() {
  : > "$tmp/retry_after"
  if [ -z "${PROVIDER_URL:-}" ]; then
    log "item $(item_field id "$tmp/item"): would send $(item_field payload "$tmp/item")"
    : > "$tmp/detail"; echo done > "$tmp/outcome"; return
  fi
  item_field payload "$tmp/item" > "$tmp/payload"
  local status trace exit_code
  trace_header
  : > "$tmp/provider"
  status=$(curl -s -o "$tmp/provider" -D "$tmp/provider_headers" -w '%{http_code}' --max-time 30 \
    -X POST -H 'Content-Type: application/json' \
    -H "Idempotency-Key: $(item_field idempotencyKey "$tmp/item")" ${trace[@]+"${trace[@]}"} \
    --data-binary @"$tmp/payload" "$PROVIDER_URL" 2>/dev/null)
  exit_code=$?
  case $status in
    2??) provider_ref "$tmp/provider" > "$tmp/detail"; echo done > "$tmp/outcome" ;;
    000)
      case $exit_code in
        5|6|7) # no name or no connection: the request never went out
          echo "provider unreachable (curl exit $exit_code)" > "$tmp/detail"; echo retry > "$tmp/outcome" ;;
        *) # a timeout, an empty reply, a reset: the request may have reached the provider
          echo "provider may have acted: no answer (curl exit $exit_code)" > "$tmp/detail"
          echo unknown > "$tmp/outcome" ;;
      esac ;;
    408|429|5??)
      echo "provider answered $status: $(excerpt "$tmp/provider")" > "$tmp/detail"
      retry_after_seconds < "$tmp/provider_headers" > "$tmp/retry_after"
      echo retry > "$tmp/outcome" ;;
    *) # any other 4xx: this request will never succeed
      echo "provider answered $status: $(excerpt "$tmp/provider")" > "$tmp/detail"
      echo permanent > "$tmp/outcome" ;;
  esac
}

# Asks your provider, by idempotency key, whether an earlier attempt's send of the item in
# $tmp/item went through. Returns 1 if it did not (send it); otherwise writes $tmp/outcome and
# $tmp/detail as send does: done with that send's reference, or retry when the provider cannot
# tell, since sending then might send twice. The demo provider answers GET $PROVIDER_URL/<key>
# with 200 {"id": ...} or 404.
already_sent() {
  [ -n "${PROVIDER_URL:-}" ] || return 1 # nothing to ask; the demo send only logs
  local status trace unsure="could not ask the provider whether an earlier attempt sent"
  trace_header
  : > "$tmp/retry_after"; : > "$tmp/provider"
  status=$(curl -s -o "$tmp/provider" -w '%{http_code}' --max-time 10 ${trace[@]+"${trace[@]}"} \
    "${PROVIDER_URL%/}/$(urlencode "$(item_field idempotencyKey "$tmp/item")")" 2>/dev/null) || true
  case $status in
    404) return 1 ;;
    200) provider_ref "$tmp/provider" > "$tmp/detail"; echo done > "$tmp/outcome" ;;
    000) echo "$unsure: provider unreachable or timed out" > "$tmp/detail"; echo retry > "$tmp/outcome" ;;
    *)
      echo "$unsure: provider answered $status: $(excerpt "$tmp/provider")" > "$tmp/detail"
      echo retry > "$tmp/outcome" ;;
  esac
}

# send, except that a claim saying an earlier attempt may have sent asks the provider first: what
# it says is then the outcome, and only "not sent" leads to a send.
send_unless_sent() {
  if [ "$(item_field possiblySent "$tmp/item")" = true ]; then
    log "item $(item_field id "$tmp/item"): an earlier attempt may have sent"
    if already_sent; then
      [ "$(cat "$tmp/outcome")" = done ] \
        && log "item $(item_field id "$tmp/item"): the provider has that send; completing with it"
      return
    fi
  fi
  send
}

work_on() {
  local id token traceparent
  id=$(item_field id "$tmp/item")
  token=$(item_field claimToken "$tmp/item")
  traceparent=$(item_field traceparent "$tmp/item")
  claim_token=$token
  # Say this attempt is about to send: should it end without a complete, the next claim is
  # flagged possiblySent (or the item held for a human) rather than sent again blindly.
  finish "/v1/items/$id/intent" "{\"claimToken\": \"$token\"}"
  if [ "$finished" != 200 ]; then
    log "item $id: intent answered $finished; not sending"
    return
  fi
  local sent_attempt= sent_ref=
  # read fails at a last line without a newline (claimq's answer ends without one), but still
  # sets the fields: test them, not read.
  read -r sent_attempt sent_ref < <(already_sent_in "$tmp/answer")
  if [ -n "$sent_ref" ]; then
    # An earlier claim's send went through after all: complete with it, do not send.
    log "item $id: already sent by attempt $sent_attempt; completing with it"
    finish "/v1/items/$id/complete" "{\"claimToken\": \"$token\", \"externalRef\": $sent_ref}" "$traceparent"
    return
  fi
  # The send runs in the background so this loop can heartbeat every third of the lease. A
  # heartbeat's alreadySent lands in $tmp/heartbeat_sent and ends the heartbeats. A subshell
  # drops this shell's traps, so it ignores SIGTERM and SIGINT itself (and so does its curl): a
  # signal to the whole process group (systemd's KillMode=control-group, kill -- -PGID, Ctrl-C)
  # then lets the send in flight finish and be reported instead of killing it. The last item's
  # outcome is removed first: a send that still leaves none (SIGKILL) is reported as unknown.
  rm -f "$tmp/heartbeat_sent" "$tmp/outcome" "$tmp/detail" "$tmp/retry_after"
  ( trap '' TERM INT; send_unless_sent ) &
  # Timed in microseconds: SECONDS counts whole seconds, so a beat every second came 0.3 s to 2 s
  # apart. EPOCHREALTIME is bash 5's; an older bash falls back to SECONDS.
  local send_pid=$! beat_every=$(( lease_seconds * 1000000 / 3 )) now
  clock_now
  local next_beat=$(( now + beat_every )) status beating=1
  while kill -0 "$send_pid" 2>/dev/null; do
    sleep 0.1
    clock_now
    if [ "$beating" = 1 ] && [ "$now" -ge "$next_beat" ]; then
      claimq "/v1/items/$id/heartbeat" "{\"claimToken\": \"$token\"}"; status=$answered
      case $status in
        200)
          already_sent_in "$tmp/answer" > "$tmp/heartbeat_sent"
          if [ -s "$tmp/heartbeat_sent" ]; then
            read -r sent_attempt sent_ref < "$tmp/heartbeat_sent"
            log "item $id: heartbeat says attempt $sent_attempt sent it already"
            beating=0
          fi ;;
        409) log "item $id: heartbeat answered 409: the claim is gone"; beating=0 ;;
        *) log "item $id: heartbeat answered $status; trying again" ;;
      esac
      clock_now
      next_beat=$(( now + beat_every ))
    fi
  done
  wait "$send_pid"

  local outcome detail retry_after body sent=
  outcome=$(cat "$tmp/outcome" 2>/dev/null); detail=$(cat "$tmp/detail" 2>/dev/null)
  retry_after=$(cat "$tmp/retry_after" 2>/dev/null)
  if [ -z "$outcome" ]; then
    outcome=unknown; detail="the send ended without an outcome (killed?); the provider may have acted"
  fi
  if [ -s "$tmp/heartbeat_sent" ] && [ "$outcome" != done ]; then
    # That earlier send is the item's send, and this one did not go out: complete with it.
    read -r sent_attempt sent_ref < "$tmp/heartbeat_sent"
    log "item $id: completing with attempt $sent_attempt's send instead of this send's outcome ($outcome)"
    body="{\"claimToken\": \"$token\", \"externalRef\": $sent_ref}"
    finish "/v1/items/$id/complete" "$body" "$traceparent"; status=$finished
    [ "$status" = 200 ] && log "item $id: done (${sent_ref//\"/})"
  elif [ "$outcome" = done ]; then
    if [ -s "$tmp/heartbeat_sent" ]; then
      # Told too late: this send went out as well. Its own reference is reported, so that
      # claimq counts a second send (duplicateSends) where the provider made one.
      read -r sent_attempt sent_ref < "$tmp/heartbeat_sent"
      log "item $id: attempt $sent_attempt sent it too; completing with this send's reference"
    fi
    body="{\"claimToken\": \"$token\"${detail:+, \"externalRef\": $(json_string "$detail")}}"
    finish "/v1/items/$id/complete" "$body" "$traceparent"; status=$finished
    [ "$status" = 200 ] && log "item $id: done ($detail)"
  else
    # unknown: the provider may have acted, so the next claim must ask it before sending again.
    [ "$outcome" = unknown ] && sent=', "sent": "unknown"'
    body="{\"claimToken\": \"$token\", \"error\": $(json_string "$detail"), \"retryable\": $([ "$outcome" = permanent ] && echo false || echo true)$sent${retry_after:+, \"retryAfterSeconds\": $retry_after}}"
    finish "/v1/items/$id/fail" "$body" "$traceparent"; status=$finished
    [ "$status" = 200 ] && log "item $id: $detail, now $(item_field state "$tmp/answer")"
  fi
  case $status in
    200) ;;
    # Another claim owns the item now. The provider has our idempotency key, so the next send of
    # this item is recognised as this one: nothing to undo, nothing to redo.
    409) log "item $id: claim gone; leaving the item to its current claim" ;;
    *) log "item $id: claimq answered $status: $(cat "$tmp/answer" 2>/dev/null)" ;;
  esac
}

claim_body="{\"worker\": $(json_string "$worker"), \"leaseSeconds\": $lease_seconds, \"waitSeconds\": $wait_seconds}"
failures=0
while [ "$stopping" = 0 ]; do
  claimq "/v1/queues/$queue/claim" "$claim_body" $(( wait_seconds + 10 )); status=$answered
  cp "$tmp/answer" "$tmp/item"
  # A 200 without an item (a proxy's empty answer, say) is a failed claim like any other.
  [ "$status" = 200 ] && [ -z "$(item_field claimToken "$tmp/item" 2>/dev/null)" ] && status="200 without an item:"
  case $status in
    200)
      failures=0
      work_on ;; # a claimed item is finished even when stopping
    204) # nothing due within waitSeconds
      failures=0
      if [ "$exit_when_empty" = 1 ]; then log "queue $queue is empty; exiting"; break; fi ;;
    *)
      failures=$(( failures < 6 ? failures + 1 : 6 ))
      delay=$(backoff "$failures")
      log "claim: answered $status $(cat "$tmp/answer" 2>/dev/null); again in ${delay}s"
      sleep "$delay" ;;
  esac
done
log stopped
exit 0
