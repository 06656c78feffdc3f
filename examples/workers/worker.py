#!/usr/bin/env python3
"""A claimq worker in Python 3 with only the standard library: the protocol of
openapi/worker-protocol.md, end to end. Replace send() with your own side effect, and
already_sent() with asking your provider by idempotency key.

    python3 worker.py --queue emails [--url http://localhost:8080] [--worker mailer-1]
                      [--api-key KEY] [--lease-seconds 60] [--wait-seconds 20] [--exit-when-empty]

Every flag also reads an env var: CLAIMQ_URL, CLAIMQ_QUEUE, CLAIMQ_WORKER, CLAIMQ_API_KEY,
CLAIMQ_LEASE_SECONDS, CLAIMQ_WAIT_SECONDS, CLAIMQ_EXIT_WHEN_EMPTY=1. With PROVIDER_URL set, the
demo send POSTs the payload there (and already_sent() asks GET PROVIDER_URL/<key>); without it,
it only logs. An item's traceparent (the agent's trace) goes along as the traceparent header on
the calls to the provider and on complete and fail. Each complete or fail also claims the next
item (next), one call per item. SIGTERM or SIGINT: finish the item in hand, then exit 0.
"""
import argparse
import http.client
import json
import os
import random
import signal
import socket
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

stopping = threading.Event()
secrets = {"api_key": None, "claim_token": None}  # never written to the log, whoever echoes them


class Transient(Exception):
    """claimq did not answer usefully (connection error, timeout, 5xx): try again later."""


class ClaimGone(Exception):
    """409: this claim is no longer current. Stop working on the item; never redo the send."""


# The outcome of one send, as claimq wants to hear it.
def done(external_ref):
    return ("done", external_ref, None)


MAX_RETRY_AFTER_SECONDS = 86400  # the longest retryAfterSeconds claimq takes


def retry_after_seconds(header):
    """The provider's Retry-After as claimq takes it: whole seconds, at most a day; None for
    anything else (an HTTP-date, garbage), so that claimq's own backoff applies."""
    header = header.strip()
    if not (header.isascii() and header.isdigit()):
        return None
    return min(int(header), MAX_RETRY_AFTER_SECONDS)


def reference(sent_id):
    """The provider's id as claimq's externalRef, which is a string: a numeric id as its digits."""
    return None if sent_id is None else sent_id if isinstance(sent_id, str) else json.dumps(sent_id)


def reference_in(raw):
    """The reference in a provider's 2xx body, or None: a 2xx is a send whatever its body says
    (empty, text, not an object), so an unreadable body only means there is no reference."""
    try:
        return reference(json.loads(raw).get("id"))
    except (ValueError, AttributeError):
        return None


def read_body(response):
    """The body of a 2xx, or b"" if the connection breaks while it is read: the send was taken."""
    try:
        return response.read()
    except (OSError, http.client.HTTPException):  # IncompleteRead is no OSError
        return b""


def retry(error, retry_after_seconds=None):
    return ("retry", error, retry_after_seconds)


def permanent(error):
    return ("permanent", error, None)


def unknown(error):
    """Retryable, but the provider may have acted: the next claim is flagged possiblySent."""
    return ("unknown", error, None)


class Claimq:
    def __init__(self, url, api_key):
        self.url = url.rstrip("/")
        self.api_key = api_key

    def post(self, path, body, timeout=10, headers=None):
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", **(headers or {})})
        if self.api_key:
            request.add_header("Authorization", "Bearer " + self.api_key)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read()
                status = response.status
        except urllib.error.HTTPError as error:
            if error.code == 409:
                raise ClaimGone(error.read().decode(errors="replace"))
            if error.code >= 500:
                raise Transient("claimq answered %d" % error.code)
            raise RuntimeError("claimq refused %s: %d %s" % (
                path, error.code, error.read().decode(errors="replace")))
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            raise Transient(str(error))  # refused, reset, timed out, cut off
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            raise Transient("claimq answered %d with no JSON: %r" % (status, raw[:200]))

    def finish(self, path, body, tries=10, headers=None, timeout=10):
        """complete and fail are repeat-safe, so a lost answer is simply asked again, for long
        enough (about a minute and a half) to outlast a claimq restart."""
        for attempt in range(1, tries + 1):
            if stopping.is_set():
                # A stopping worker claims nothing more: a report made again after SIGTERM (its
                # first try refused or lost) asks for no next item.
                body.pop("next", None)
            try:
                return self.post(path, body, headers=headers, timeout=timeout)
            except Transient as error:
                if attempt == tries:
                    raise Transient("%s: %s; gave up after %d tries, the lease will release the "
                                    "item" % (path, error, tries))
                delay = backoff(attempt)
                log("%s: %s; again in %.1fs" % (path, error, delay))
                threading.Event().wait(delay)  # not stopping.wait: finishing outlives a SIGTERM


def backoff(attempt, cap=30.0):
    """Full jitter: a random delay up to 0.5s * 2^attempt, so restarted workers spread out. The
    exponent stops at 16 (far past the cap): 2.0 ** 1024 is an OverflowError, not a delay."""
    return random.uniform(0, min(cap, 0.5 * 2.0 ** min(attempt, 16)))


def trace(item):
    """The agent's trace, when the item carries one: continued by each call made for it."""
    return {"traceparent": item["traceparent"]} if item.get("traceparent") else {}


def send(item):
    """The side effect. Always pass item["idempotencyKey"] to the provider: if this item is ever
    sent twice (a stale worker, a crash before complete), the provider makes it one send."""
    provider_url = os.environ.get("PROVIDER_URL")
    if not provider_url:
        log("item %s: would send %s" % (item["id"], json.dumps(item["payload"])))
        return done(None)
    request = urllib.request.Request(
        provider_url, data=json.dumps(item["payload"]).encode(), method="POST",
        headers={"Content-Type": "application/json", "Idempotency-Key": item["idempotencyKey"],
                 **trace(item)})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return done(reference_in(read_body(response)))
    except urllib.error.HTTPError as error:
        reason = "provider answered %d: %s" % (error.code, error.read(500).decode(errors="replace"))
        retry_after = error.headers.get("Retry-After", "")
        if error.code in (408, 429) or error.code >= 500:
            return retry(reason, retry_after_seconds(retry_after))
        return permanent(reason)  # any other 4xx: this request will never succeed
    except urllib.error.URLError as error:  # refused, unresolvable: the request never went out
        return retry("provider unreachable: %s" % error.reason)
    except OSError as error:  # reset, closed or timed out once the request was written
        return unknown("provider may have acted: %s" % (str(error) or type(error).__name__))


def already_sent(item):
    """Asks your provider, by idempotency key, whether an earlier attempt's send of this item went
    through: done(its reference) if it did, None if it did not (send it), or retry(...) when the
    provider cannot tell, since sending then might send twice. The demo provider answers
    GET PROVIDER_URL/<key> with 200 {"id": ...} or 404."""
    provider_url = os.environ.get("PROVIDER_URL")
    if not provider_url:
        return None  # nothing to ask; the demo send only logs
    unsure = "could not ask the provider whether an earlier attempt sent: "
    url = provider_url.rstrip("/") + "/" + urllib.parse.quote(item["idempotencyKey"], safe="")
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=trace(item)),
                                    timeout=10) as response:
            if response.status != 200:
                return retry(unsure + "provider answered %d" % response.status)
            return done(reference_in(read_body(response)))  # it did send
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        return retry(unsure + "provider answered %d: %s"
                     % (error.code, error.read(500).decode(errors="replace")))
    except (urllib.error.URLError, OSError) as error:
        return retry(unsure + str(error))


def send_unless_sent(item):
    """send(), except that a claim saying an earlier attempt may have sent asks the provider
    first: what it says is then the outcome, and only "not sent" leads to a send."""
    if item.get("possiblySent"):
        log("item %s: an earlier attempt may have sent (%d before)"
            % (item["id"], len(item.get("priorAttempts") or [])))
        outcome = already_sent(item)
        if outcome is not None:
            if outcome[0] == "done":
                log("item %s: the provider has that send; completing with it" % item["id"])
            return outcome
    return send(item)


def heartbeat_until(finished, claimq, item, lease_seconds, earlier_send):
    """Extends the lease every third of it while the send runs, so a slow send keeps its claim.
    An answer saying an earlier claim's send went through after all ends the heartbeats and is
    kept in earlier_send, for work_on to read once this thread has ended."""
    while not finished.wait(lease_seconds / 3):
        try:
            _, answer = claimq.post("/v1/items/%s/heartbeat" % item["id"],
                                    {"claimToken": item["claimToken"]})
        except ClaimGone:
            log("item %s: heartbeat answered 409: the claim is gone" % item["id"])
            return
        except (Transient, RuntimeError) as error:
            log("item %s: heartbeat failed (%s); trying again" % (item["id"], error))
            continue
        sent = answer.get("alreadySent") if isinstance(answer, dict) else None
        if sent:
            log("item %s: heartbeat says attempt %s sent it already"
                % (item["id"], sent.get("attempt")))
            earlier_send.append(sent)
            return


def declare_intent(claimq, item):
    """Says this attempt is about to send, so that if it ends without a complete the next claim
    is flagged possiblySent (or the item held for a human) rather than sent again blindly."""
    try:
        _, answer = claimq.finish("/v1/items/%s/intent" % item["id"],
                                  {"claimToken": item["claimToken"]})
        sent = (answer or {}).get("alreadySent")
        if sent:
            # An earlier claim's send went through after all: complete with it, do not send.
            log("item %s: already sent by attempt %s; completing with it" % (item["id"], sent["attempt"]))
            claimq.finish("/v1/items/%s/complete" % item["id"],
                          {"claimToken": item["claimToken"], "externalRef": sent["externalRef"]},
                          headers=trace(item))
            return False
    except ClaimGone:
        log("item %s: claim gone before sending; not sending" % item["id"])
        return False
    except (Transient, RuntimeError) as error:
        log("item %s: %s; not sending, the lease will release it" % (item["id"], error))
        return False
    return True


def work_on(claimq, item, lease_seconds, claim):
    """Sends the item and reports it. The report asks for the next item too (one call per item)
    unless the worker is stopping; returns that next item, or None: then claim as usual."""
    secrets["claim_token"] = item["claimToken"]
    if not declare_intent(claimq, item):
        return None
    finished = threading.Event()
    earlier_send = []  # written by the heartbeat thread, read only after join()
    heartbeat = threading.Thread(target=heartbeat_until,
                                 args=(finished, claimq, item, lease_seconds, earlier_send),
                                 daemon=True)
    heartbeat.start()
    try:
        outcome, detail, retry_after = send_unless_sent(item)
    except Exception as error:  # a bug in send(): report it rather than hold the item
        outcome, detail, retry_after = unknown("worker error: %r" % error)
    finally:
        finished.set()
        heartbeat.join()
    if earlier_send and outcome == "done":
        # Told too late: this send went out as well. Its own reference is reported, so that
        # claimq counts a second send (duplicateSends) where the provider made one.
        log("item %s: attempt %s sent it too; completing with this send's reference"
            % (item["id"], earlier_send[0].get("attempt")))
    elif earlier_send:
        # That earlier send is the item's send, and this one did not go out: complete with it.
        log("item %s: completing with attempt %s's send instead of this send's outcome (%s)"
            % (item["id"], earlier_send[0].get("attempt"), outcome))
        outcome, detail, retry_after = done(earlier_send[0].get("externalRef"))

    path = "/v1/items/%s/" % item["id"]
    token = item["claimToken"]
    # A stopping worker claims nothing more. A repeated report answers next: null (its lost first
    # answer's item waits for its lease to end), so the wait stays within the call's timeout.
    wants_next = not stopping.is_set()
    timeout = claim["waitSeconds"] + 10
    try:
        if outcome == "done":
            body = {"claimToken": token}
            if detail:
                body["externalRef"] = detail
            if wants_next:
                body["next"] = claim
            _, answer = claimq.finish(path + "complete", body, headers=trace(item),
                                      timeout=timeout)
            log("item %s: done (%s)" % (item["id"], detail))
        else:
            body = {"claimToken": token, "error": detail, "retryable": outcome != "permanent"}
            if outcome == "unknown":
                body["sent"] = "unknown"
            if retry_after is not None:
                body["retryAfterSeconds"] = retry_after
            if wants_next:
                body["next"] = claim
            _, answer = claimq.finish(path + "fail", body, headers=trace(item), timeout=timeout)
            log("item %s: %s, now %s" % (item["id"], detail, (answer or {}).get("state")))
        # No next in the answer (a claimq without it): claim as usual.
        next_item = answer.get("next") if wants_next and isinstance(answer, dict) else None
        return next_item if claimed_item(next_item) else None
    except ClaimGone:
        # Another claim owns the item now. The provider has our idempotency key, so the next
        # send of this item is recognised as this one: nothing to undo, nothing to redo.
        log("item %s: claim gone; leaving the item to its current claim" % item["id"])
    except (Transient, RuntimeError) as error:
        log("item %s: %s" % (item["id"], error))
    return None


def what_it_holds(answer):
    """An answer's field names, not its values: a claimToken in it must not reach the log."""
    return ("fields: " + ", ".join(sorted(answer))) if isinstance(answer, dict) else type(answer).__name__


def claimed_item(body):
    """Whether an answer is a claimed item, as claim-next or a report's next answers it."""
    return (isinstance(body, dict) and isinstance(body.get("claimToken"), str)
            and isinstance(body.get("id"), str))


def run(args):
    claimq = Claimq(args.url, args.api_key)
    body = {"worker": args.worker, "leaseSeconds": args.lease_seconds,
            "waitSeconds": args.wait_seconds}
    failures = 0
    item = None  # the next item, claimed by the last report
    while item or not stopping.is_set():
        if item:  # a claimed item is finished even when stopping
            item = work_on(claimq, item, args.lease_seconds, body)
            continue
        try:
            status, answer = claimq.post("/v1/queues/%s/claim" % args.queue, body,
                                         timeout=args.wait_seconds + 10)
            # A 200 without an item (a proxy's empty answer, say) is a failed claim like any other.
            if status == 200 and not claimed_item(answer):
                raise Transient("claim answered 200 without an item (%s)" % what_it_holds(answer))
            failures = 0
        except (Transient, RuntimeError) as error:
            failures += 1
            delay = backoff(failures)
            log("claim: %s; again in %.1fs" % (error, delay))
            stopping.wait(delay)
            continue
        if status == 204:  # nothing due within waitSeconds
            if args.exit_when_empty:
                log("queue %s is empty; exiting" % args.queue)
                break
            continue
        item = work_on(claimq, answer, args.lease_seconds, body)
    log("stopped")
    return 0


def log(message):
    for secret in secrets.values():
        if secret:
            message = message.replace(secret, "<redacted>")
    print("%s: %s" % (WORKER_NAME, message), flush=True)


def parse_args():
    env = os.environ.get
    parser = argparse.ArgumentParser(description="A claimq worker.")
    parser.add_argument("--url", default=env("CLAIMQ_URL", "http://localhost:8080"))
    parser.add_argument("--queue", default=env("CLAIMQ_QUEUE"), required=not env("CLAIMQ_QUEUE"))
    parser.add_argument("--worker",
                        default=env("CLAIMQ_WORKER", "%s-%d" % (socket.gethostname(), os.getpid())))
    parser.add_argument("--api-key", default=env("CLAIMQ_API_KEY"))
    parser.add_argument("--lease-seconds", type=int, default=int(env("CLAIMQ_LEASE_SECONDS", 60)))
    parser.add_argument("--wait-seconds", type=int, default=int(env("CLAIMQ_WAIT_SECONDS", 20)))
    parser.add_argument("--exit-when-empty", action="store_true",
                        default=env("CLAIMQ_EXIT_WHEN_EMPTY") == "1")
    return parser.parse_args()


if __name__ == "__main__":
    arguments = parse_args()
    WORKER_NAME = arguments.worker
    secrets["api_key"] = arguments.api_key
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    sys.exit(run(arguments))
