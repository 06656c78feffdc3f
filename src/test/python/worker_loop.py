"""A whole worker loop through the Python client that the build generates from the committed
OpenAPI document, run by GeneratedPythonClientTest against a live service (CLAIMQ_URL). Any step
that does not answer as the document says raises, and the process exits 1."""
import json
import os
import sys

import claimq_client
from claimq_client import (
    AgentsApi,
    ClaimBatchRequest,
    ClaimNextRequest,
    ClaimRequest,
    CompleteBatchRequest,
    CompleteEntry,
    CompleteRequest,
    EnqueueBatchRequest,
    EnqueueRequest,
    FailRequest,
    HeartbeatRequest,
    ItemState,
    OperatorsApi,
    WorkersApi,
)

BASE = os.environ.get("CLAIMQ_URL", "http://localhost:8080")
QUEUE = os.environ.get("CLAIMQ_QUEUE", "python-client")


def api(cls, key):
    return cls(claimq_client.ApiClient(claimq_client.Configuration(host=BASE, access_token=key)))


agent = api(AgentsApi, "dev-agent-key")
worker = api(WorkersApi, "dev-worker-key")
operator = api(OperatorsApi, "dev-operator-key")


def check(condition, what):
    if not condition:
        raise AssertionError("not as documented: " + what)
    print("ok " + what, flush=True)


def refusal(call):
    """The problem+json a call was refused with."""
    try:
        call()
    except claimq_client.ApiException as e:
        check(e.headers["Content-Type"].startswith("application/problem+json"), "a refusal is problem+json")
        return json.loads(e.body)
    raise AssertionError("not as documented: the call was not refused")


def main():
    work = EnqueueRequest(dedupe_key="welcome/42", payload={"to": "ada"})
    created = agent.enqueue_with_http_info(QUEUE, work)
    item = created.data
    check(created.status_code == 201, "enqueue answers 201")
    check(created.headers["Location"] == "/v1/items/" + item.id, "Location is relative")
    check(item.state == ItemState.PENDING and item.claimed_by is None, "a new item is pending")
    replayed = agent.enqueue_with_http_info(QUEUE, work)
    check(replayed.status_code == 200 and replayed.data.id == item.id, "a replay is 200")
    reused = refusal(lambda: agent.enqueue(QUEUE, EnqueueRequest(dedupe_key="welcome/42", payload={"to": "grace"})))
    check(reused["status"] == 422 and reused["type"].endswith("/dedupe-key-reused"), "a reused key is 422")

    agent.enqueue(QUEUE, EnqueueRequest(dedupe_key="b", payload=2))
    agent.enqueue(QUEUE, EnqueueRequest(dedupe_key="c", payload=3))
    claimed = worker.claim_next(QUEUE, ClaimNextRequest(worker="py-1"))
    check(claimed.id == item.id and claimed.claim_token, "claim-next hands out the oldest")
    many = worker.claim_next_batch(QUEUE, ClaimBatchRequest(worker="py-1", max=10))
    check(len(many.items) == 2, "a batch claim takes the other two")
    none = worker.claim_next_with_http_info(QUEUE, ClaimNextRequest(worker="py-1"))
    check(none.status_code == 204 and none.data is None, "an empty queue answers 204")
    lost = worker.claim_item_with_http_info(item.id, ClaimRequest(worker="py-2"))
    check(lost.status_code == 204, "a lost claim by id is a quiet 204")

    token = claimed.claim_token
    extended = worker.heartbeat(item.id, HeartbeatRequest(claim_token=token, lease_seconds=120))
    check(extended.lease_expires_at is not None, "a heartbeat extends the lease")
    done = worker.complete(item.id, CompleteRequest(claim_token=token, external_ref="msg_1"))
    check(done.state == ItemState.DONE and done.external_ref == "msg_1", "complete records the send")
    second, third = many.items
    # A reason that starts with white space is one the service takes: the client must too.
    reason = "\n SMTP 550"
    failed = worker.fail(second.id, FailRequest(claim_token=second.claim_token, error=reason, retryable=False))
    check(failed.state == ItemState.FAILED and failed.last_error == reason, "a permanent fail")
    stale = refusal(lambda: worker.complete(second.id, CompleteRequest(claim_token=token)))
    check(stale["status"] == 409 and stale["type"].endswith("/stale-claim"), "a stale complete is 409")
    batch = worker.complete_batch(
        CompleteBatchRequest(items=[CompleteEntry(id=third.id, claim_token=third.claim_token)]))
    check(batch.results[0].status == 200, "a batch complete answers per entry")
    enqueued = agent.enqueue_batch(QUEUE, EnqueueBatchRequest(items=[
        EnqueueRequest(dedupe_key="d", payload=4), EnqueueRequest(dedupe_key="b", payload=2)]))
    check([r.status for r in enqueued.results] == [201, 200], "a batch enqueue answers per entry")

    page = operator.list_items(queue=QUEUE, state="failed", limit=10)
    check([i.id for i in page.items] == [second.id], "operators list failed items")
    check(page.next_cursor is None, "the last page has no cursor")
    retried = operator.retry(second.id)
    check(retried.state == ItemState.PENDING and retried.attempts == 0, "retry makes it pending")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the test shows what broke, and the exit code says it broke
        print(repr(e))
        sys.exit(1)
