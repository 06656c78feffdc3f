#!/usr/bin/env python3
"""A worker that claims one item and then stops at a named step, so the fault suite can SIGKILL
or SIGSTOP it at exactly that point. It speaks the same HTTP as the reference workers.

    fault_worker.py URL QUEUE PROVIDER_URL API_KEY LEASE_SECONDS MODE [WAIT_SECONDS]

MODE  claim: claim, print "CLAIMED <id>", then block (to be killed holding a fresh claim);
      send:  claim, send, print "SENT <id>", then block (killed between send and complete);
      intent: as send, but declare the send intent first (killed after an intent and a send);
      late:  claim, send, print "SENT <id>", wait a second (the suite stops it here), then
             complete and print "COMPLETE <id> <status>";
      lateref: as late, but the complete carries the provider's reference (a late success).
Prints "EMPTY" and exits when there was nothing to claim (after long-polling WAIT_SECONDS, 0 by
default: a queue that is drained as fast as it fills, as in the soak, has nothing waiting).
"""
import json
import sys
import time
import urllib.error
import urllib.request


def post(url, body, headers, timeout=10):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers=dict(headers, **{"Content-Type": "application/json"}))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        return error.code, None


def main(url, queue, provider, key, lease, mode, wait="0"):
    auth = {"Authorization": "Bearer " + key}
    claim = {"worker": "fault-%s" % mode, "leaseSeconds": int(lease)}
    if int(wait) > 0:
        claim["waitSeconds"] = int(wait)
    status, item = post("%s/v1/queues/%s/claim" % (url, queue), claim, auth,
                        timeout=10 + int(wait))
    if status != 200:
        print("EMPTY" if status == 204 else "CLAIM %d" % status, flush=True)
        return 0
    if mode == "claim":
        print("CLAIMED %s" % item["id"], flush=True)
        time.sleep(3600)
        return 0
    if mode == "intent":
        status, _ = post("%s/v1/items/%s/intent" % (url, item["id"]),
                         {"claimToken": item["claimToken"]}, auth)
        if status != 200:
            print("INTENT %d" % status, flush=True)
            return 0
    _, sent = post(provider, item["payload"], {"Idempotency-Key": item["idempotencyKey"]},
                   timeout=30)
    print("SENT %s" % item["id"], flush=True)
    if mode in ("send", "intent"):
        time.sleep(3600)
        return 0
    time.sleep(1)
    body = {"claimToken": item["claimToken"]}
    if mode == "lateref":
        body["externalRef"] = (sent or {}).get("id")
    status, _ = post("%s/v1/items/%s/complete" % (url, item["id"]), body, auth)
    print("COMPLETE %s %d" % (item["id"], status), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:8]))
