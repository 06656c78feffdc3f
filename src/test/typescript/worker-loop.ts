// A whole worker loop through the typescript-fetch client that the build generates from the
// committed OpenAPI document. Type-checked with tsc --strict and run by Node against a live
// service (CLAIMQ_URL) by GeneratedTypeScriptClientTest: any step that does not answer as the
// document says throws, and the process exits 1.
import {
  AgentsApi,
  Configuration,
  ItemState,
  OperatorsApi,
  ResponseError,
  WorkersApi,
} from "../../../target/generated-clients/typescript";

declare const process: {
  env: Record<string, string | undefined>;
  exitCode: number | undefined;
};

const basePath = process.env.CLAIMQ_URL ?? "http://localhost:8080";
const queue = process.env.CLAIMQ_QUEUE ?? "typescript-client";
const as = (key: string) => new Configuration({ basePath, accessToken: key });
const agent = new AgentsApi(as("dev-agent-key"));
const worker = new WorkersApi(as("dev-worker-key"));
const operator = new OperatorsApi(as("dev-operator-key"));

function check(condition: boolean, what: string): void {
  if (!condition) {
    throw new Error("not as documented: " + what);
  }
  console.log("ok " + what);
}

/** The problem+json a call was refused with. */
async function refusal(call: () => Promise<unknown>): Promise<{ status: number; type: string }> {
  try {
    await call();
  } catch (e) {
    if (e instanceof ResponseError) {
      const type = e.response.headers.get("Content-Type") ?? "";
      check(type.startsWith("application/problem+json"), "a refusal is problem+json");
      return (await e.response.json()) as { status: number; type: string };
    }
    throw e;
  }
  throw new Error("not as documented: the call was not refused");
}

async function main(): Promise<void> {
  const work = { dedupeKey: "welcome/42", payload: { to: "ada" } };
  const created = await agent.enqueueRaw({ queue, enqueueRequest: work });
  const item = await created.value();
  check(created.raw.status === 201, "enqueue answers 201");
  check(created.raw.headers.get("Location") === "/v1/items/" + item.id, "Location is relative");
  check(item.state === ItemState.Pending && item.claimedBy === null, "a new item is pending");
  const replayed = await agent.enqueueRaw({ queue, enqueueRequest: work });
  check(replayed.raw.status === 200 && (await replayed.value()).id === item.id, "a replay is 200");
  const reused = await refusal(() =>
    agent.enqueue({ queue, enqueueRequest: { dedupeKey: "welcome/42", payload: { to: "grace" } } }),
  );
  check(reused.status === 422 && reused.type.endsWith("/dedupe-key-reused"), "a reused key is 422");

  await agent.enqueue({ queue, enqueueRequest: { dedupeKey: "b", payload: 2 } });
  await agent.enqueue({ queue, enqueueRequest: { dedupeKey: "c", payload: 3 } });
  const claimed = await worker.claimNext({ queue, claimNextRequest: { worker: "ts-1" } });
  check(claimed?.id === item.id && claimed.claimToken.length > 0, "claim-next hands out the oldest");
  const many = await worker.claimNextBatch({ queue, claimBatchRequest: { worker: "ts-1", max: 10 } });
  check(many?.items.length === 2, "a batch claim takes the other two");
  const none = await worker.claimNext({ queue, claimNextRequest: { worker: "ts-1" } });
  check(none === null, "an empty queue answers 204, read as null");
  const lost = await worker.claimItemRaw({ id: item.id, claimRequest: { worker: "ts-2" } });
  check(lost.raw.status === 204, "a lost claim by id is a quiet 204");

  const token = claimed!.claimToken;
  const extended = await worker.heartbeat({
    id: item.id,
    heartbeatRequest: { claimToken: token, leaseSeconds: 120 },
  });
  check(extended.leaseExpiresAt !== null, "a heartbeat extends the lease");
  const done = await worker.complete({
    id: item.id,
    completeRequest: { claimToken: token, externalRef: "msg_1" },
  });
  check(done.state === ItemState.Done && done.externalRef === "msg_1", "complete records the send");
  const [second, third] = many!.items;
  const failed = await worker.fail({
    id: second.id,
    failRequest: { claimToken: second.claimToken, error: "SMTP 550", retryable: false },
  });
  check(failed.state === ItemState.Failed && failed.lastError === "SMTP 550", "a permanent fail");
  const stale = await refusal(() =>
    worker.complete({ id: second.id, completeRequest: { claimToken: token } }),
  );
  check(stale.status === 409 && stale.type.endsWith("/stale-claim"), "a stale complete is 409");
  const batch = await worker.completeBatch({
    completeBatchRequest: { items: [{ id: third.id, claimToken: third.claimToken }] },
  });
  check(batch.results[0].status === 200, "a batch complete answers per entry");
  const enqueued = await agent.enqueueBatch({
    queue,
    enqueueBatchRequest: { items: [{ dedupeKey: "d", payload: 4 }, { dedupeKey: "b", payload: 2 }] },
  });
  check(
    enqueued.results[0].status === 201 && enqueued.results[1].status === 200,
    "a batch enqueue answers per entry",
  );

  const page = await operator.listItems({ queue, state: "failed", limit: 10 });
  check(page.items.length === 1 && page.items[0].id === second.id, "operators list failed items");
  check(page.nextCursor === null, "the last page has no cursor");
  const retried = await operator.retry({ id: second.id });
  check(retried.state === ItemState.Pending && retried.attempts === 0, "retry makes it pending");
}

main().catch((e: unknown) => {
  console.log(String(e));
  process.exitCode = 1;
});
