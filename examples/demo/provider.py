#!/usr/bin/env python3
"""A fake downstream provider for the demo and the tests: it records every send by its
Idempotency-Key, so anyone can check afterwards that each item was sent exactly once.

    python3 provider.py [--port 0]      # prints "PROVIDER_URL=http://127.0.0.1:<port>/sends" first

POST /sends   the payload as JSON, with header Idempotency-Key (400 without one).
              201 {"id": "snd_…"} for a new key; 200 and the same id for a key seen before,
              as a real provider would, so a repeated send is harmless (and counted).
              The payload steers it, to play a provider having a bad day:
                "sleepSeconds": n    answer after n seconds (a slow send)
                "fail": "always"     503 with Retry-After (a provider outage)
                "fail": "permanent"  422 (a request that will never succeed)
                "failTimes": n       503 with Retry-After for the first n requests of a key
                "retryAfter": n      the Retry-After those 503s carry (default 1); a string
                                     goes verbatim (a huge number, an HTTP-date)
                "failStatus": n      the status of those failures instead of 503 (e.g. 429)
                "failBody": "text"   their body, as text/plain, instead of a JSON error
                "numericId": true    the id of an accepted send is a JSON number, not a string
                "hangSeconds": n     hold the request n seconds, then drop the connection
                                     unanswered, not counted as a send (a provider that hangs)
GET  /sends   the record: {"sends": [{idempotencyKey, id, accepted, refused, payload}]}
              accepted counts the requests answered 2xx; exactly once means accepted == 1.
GET  /sends/<key>  the lookup by idempotency key (URL-encoded), for a worker whose claim says
              possiblySent: 200 {"id": "snd_…"} if a send with that key was accepted, 404
              {"error": …} if none was (never seen, refused or hung). Not counted as a send.
GET  /requests  every request in arrival order: {"requests": [{idempotencyKey, status,
              payload, traceparent}]} (status 0: hung; traceparent null when the request had
              none), so a checker can see which keys, and which trace, each item was sent with.
"""
import argparse
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

record = {}  # idempotency key -> {idempotencyKey, id, accepted, refused, payload}
record_lock = threading.Lock()
requests = []  # every POST /sends: {idempotencyKey, status, payload}, in arrival order


class Provider(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path == "/requests":
            with record_lock:
                seen = [dict(entry) for entry in requests]
            return self.answer(200, {"requests": seen})
        if self.path.startswith("/sends/"):
            return self.look_up(urllib.parse.unquote(self.path[len("/sends/"):]))
        if self.path != "/sends":
            return self.answer(404, {"error": "no such path"})
        with record_lock:
            sends = [dict(entry) for entry in record.values()]
        self.answer(200, {"sends": sends})

    def look_up(self, key):
        # Only an accepted send has an id: a key seen but refused (or hung) was never sent.
        with record_lock:
            sent_id = record[key]["id"] if key in record else None
        if sent_id is None:
            return self.answer(404, {"error": "no send accepted with this Idempotency-Key"})
        self.answer(200, {"id": sent_id})

    def do_POST(self):
        if self.path != "/sends":
            return self.answer(404, {"error": "no such path"})
        key = self.headers.get("Idempotency-Key")
        try:
            payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        except ValueError:
            return self.answer(400, {"error": "the body must be JSON"})
        if not key:
            return self.answer(400, {"error": "Idempotency-Key header required"})
        steer = payload if isinstance(payload, dict) else {}

        if steer.get("hangSeconds"):
            time.sleep(float(steer["hangSeconds"]))
            with record_lock:
                requests.append({"idempotencyKey": key, "status": 0, "payload": payload,
                                 "traceparent": self.headers.get("traceparent")})
            self.close_connection = True
            return
        time.sleep(float(steer.get("sleepSeconds", 0)))
        with record_lock:
            entry = record.setdefault(
                key, {"idempotencyKey": key, "id": None, "accepted": 0, "refused": 0,
                      "payload": payload})
            # Decide and count in one step, so concurrent requests of one key cannot both be
            # "the first".
            if steer.get("fail") == "permanent":
                entry["refused"] += 1
                outcome = (422, {"error": "permanent: this request will never succeed"}, {})
            elif steer.get("fail") == "always" or entry["refused"] < int(steer.get("failTimes", 0)):
                entry["refused"] += 1
                retry_after = steer.get("retryAfter", 1)
                if not isinstance(retry_after, str):
                    retry_after = str(int(retry_after))
                outcome = (int(steer.get("failStatus", 503)),
                           steer.get("failBody", {"error": "temporarily unavailable"}),
                           {"Retry-After": retry_after})
            else:
                replay = entry["id"] is not None
                if not replay:
                    number = 1 + sum(1 for e in record.values() if e["id"] is not None)
                    entry["id"] = 12344 + number if steer.get("numericId") else "snd_%04d" % number
                entry["accepted"] += 1
                outcome = (200 if replay else 201, {"id": entry["id"]},
                           {"Idempotent-Replayed": "true"} if replay else {})
            requests.append({"idempotencyKey": key, "status": outcome[0], "payload": payload,
                             "traceparent": self.headers.get("traceparent")})
        self.answer(*outcome)

    def answer(self, status, body, headers=None):
        text = isinstance(body, str)
        data = body.encode() if text else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8" if text else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        pass  # the record is the log; stay quiet so the demo's output stays readable


def main():
    parser = argparse.ArgumentParser(description="Fake provider that records every send.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Provider)
    print("PROVIDER_URL=http://127.0.0.1:%d/sends" % server.server_port, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
