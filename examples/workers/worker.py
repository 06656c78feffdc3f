#!/usr/bin/env python3
"""A claimq worker in Python 3 with only the standard library: the protocol of
openapi/worker-protocol.md, end to end. Replace send() with your own side effect.

    python3 worker.py --queue emails [--url http://localhost:8080] [--worker mailer-1]
                      [--api-key KEY] [--lease-seconds 60] [--wait-seconds 20] [--exit-when-empty]

Every flag also reads an env var: CLAIMQ_URL, CLAIMQ_QUEUE, CLAIMQ_WORKER, CLAIMQ_API_KEY,
CLAIMQ_LEASE_SECONDS, CLAIMQ_WAIT_SECONDS, CLAIMQ_EXIT_WHEN_EMPTY=1. With PROVIDER_URL set, the
demo send POSTs the payload there; without it, it only logs. SIGTERM or SIGINT: finish the item
in hand, then exit 0.
"""
import argparse
import json
import os
import random
import signal
import socket
import sys
import threading
import urllib.error
import urllib.request

stopping = threading.Event()


class Transient(Exception):
    """claimq did not answer usefully (connection error, timeout, 5xx): try again later."""


class ClaimGone(Exception):
    """409: this claim is no longer current. Stop working on the item; never redo the send."""


# The outcome of one send, as claimq wants to hear it.
def done(external_ref):
    return ("done", external_ref, None)


def retry(error, retry_after_seconds=None):
    return ("retry", error, retry_after_seconds)


def permanent(error):
    return ("permanent", error, None)


class Claimq:
    def __init__(self, url, api_key):
        self.url = url.rstrip("/")
        self.api_key = api_key

    def post(self, path, body, timeout=10):
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json"})
        if self.api_key:
            request.add_header("Authorization", "Bearer " + self.api_key)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            if error.code == 409:
                raise ClaimGone(error.read().decode(errors="replace"))
            if error.code >= 500:
                raise Transient("claimq answered %d" % error.code)
            raise RuntimeError("claimq refused %s: %d %s" % (
                path, error.code, error.read().decode(errors="replace")))
        except (urllib.error.URLError, OSError) as error:  # refused, reset, timed out
            raise Transient(str(error))

    def finish(self, path, body):
        """complete and fail are repeat-safe, so a lost answer is simply asked again."""
        for attempt in range(1, 7):
            try:
                return self.post(path, body)
            except Transient as error:
                delay = backoff(attempt)
                log("%s: %s; again in %.1fs" % (path, error, delay))
                threading.Event().wait(delay)  # not stopping.wait: finishing outlives a SIGTERM
        raise Transient("gave up on " + path + "; the lease will release the item")


def backoff(attempt, cap=30.0):
    """Full jitter: a random delay up to 0.5s * 2^attempt, so restarted workers spread out."""
    return random.uniform(0, min(cap, 0.5 * 2 ** attempt))


def send(item):
    """The side effect. Always pass item["idempotencyKey"] to the provider: if this item is ever
    sent twice (a stale worker, a crash before complete), the provider makes it one send."""
    provider_url = os.environ.get("PROVIDER_URL")
    if not provider_url:
        log("item %s: would send %s" % (item["id"], json.dumps(item["payload"])))
        return done(None)
    request = urllib.request.Request(
        provider_url, data=json.dumps(item["payload"]).encode(), method="POST",
        headers={"Content-Type": "application/json", "Idempotency-Key": item["idempotencyKey"]})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return done(json.loads(response.read()).get("id"))
    except urllib.error.HTTPError as error:
        reason = "provider answered %d: %s" % (error.code, error.read(500).decode(errors="replace"))
        retry_after = error.headers.get("Retry-After", "")
        if error.code in (408, 429) or error.code >= 500:
            return retry(reason, int(retry_after) if retry_after.isdigit() else None)
        return permanent(reason)  # any other 4xx: this request will never succeed
    except (urllib.error.URLError, OSError) as error:
        return retry("provider unreachable: %s" % error)


def heartbeat_until(finished, claimq, item, lease_seconds):
    """Extends the lease every third of it while the send runs, so a slow send keeps its claim."""
    while not finished.wait(lease_seconds / 3):
        try:
            claimq.post("/v1/items/%s/heartbeat" % item["id"], {"claimToken": item["claimToken"]})
        except ClaimGone:
            log("item %s: heartbeat answered 409: the claim is gone" % item["id"])
            return
        except (Transient, RuntimeError) as error:
            log("item %s: heartbeat failed (%s); trying again" % (item["id"], error))


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
                          {"claimToken": item["claimToken"], "externalRef": sent["externalRef"]})
            return False
    except ClaimGone:
        log("item %s: claim gone before sending; not sending" % item["id"])
        return False
    except (Transient, RuntimeError) as error:
        log("item %s: %s; not sending, the lease will release it" % (item["id"], error))
        return False
    if item.get("possiblySent"):
        # Ask the provider by idempotencyKey before sending, where it can be asked; the demo
        # provider honours Idempotency-Key, so sending again is answered as the same send.
        log("item %s: an earlier attempt may have sent (%d before)"
            % (item["id"], len(item.get("priorAttempts", []))))
    return True


def work_on(claimq, item, lease_seconds):
    if not declare_intent(claimq, item):
        return
    finished = threading.Event()
    heartbeat = threading.Thread(target=heartbeat_until,
                                 args=(finished, claimq, item, lease_seconds), daemon=True)
    heartbeat.start()
    try:
        outcome, detail, retry_after = send(item)
    except Exception as error:  # a bug in send(): report it rather than hold the item
        outcome, detail, retry_after = retry("worker error: %r" % error)
    finally:
        finished.set()
        heartbeat.join()

    path = "/v1/items/%s/" % item["id"]
    token = item["claimToken"]
    try:
        if outcome == "done":
            body = {"claimToken": token}
            if detail:
                body["externalRef"] = detail
            claimq.finish(path + "complete", body)
            log("item %s: done (%s)" % (item["id"], detail))
        else:
            body = {"claimToken": token, "error": detail, "retryable": outcome == "retry"}
            if retry_after is not None:
                body["retryAfterSeconds"] = retry_after
            _, answer = claimq.finish(path + "fail", body)
            log("item %s: %s, now %s" % (item["id"], detail, answer["state"]))
    except ClaimGone:
        # Another claim owns the item now. The provider has our idempotency key, so the next
        # send of this item is recognised as this one: nothing to undo, nothing to redo.
        log("item %s: claim gone; leaving the item to its current claim" % item["id"])
    except (Transient, RuntimeError) as error:
        log("item %s: %s" % (item["id"], error))


def run(args):
    claimq = Claimq(args.url, args.api_key)
    body = {"worker": args.worker, "leaseSeconds": args.lease_seconds,
            "waitSeconds": args.wait_seconds}
    failures = 0
    while not stopping.is_set():
        try:
            status, item = claimq.post("/v1/queues/%s/claim" % args.queue, body,
                                       timeout=args.wait_seconds + 10)
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
        work_on(claimq, item, args.lease_seconds)  # a claimed item is finished even when stopping
    log("stopped")
    return 0


def log(message):
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
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    sys.exit(run(arguments))
