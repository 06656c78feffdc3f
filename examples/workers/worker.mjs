#!/usr/bin/env node
// A claimq worker for Node.js 20 with only the built-in fetch: the protocol of
// openapi/worker-protocol.md, end to end. Replace send() with your own side effect, and
// alreadySent() with asking your provider by idempotency key.
//
//   node worker.mjs --queue emails [--url http://localhost:8080] [--worker mailer-1]
//                   [--api-key KEY] [--lease-seconds 60] [--wait-seconds 20] [--exit-when-empty]
//
// Every flag also reads an env var: CLAIMQ_URL, CLAIMQ_QUEUE, CLAIMQ_WORKER, CLAIMQ_API_KEY,
// CLAIMQ_LEASE_SECONDS, CLAIMQ_WAIT_SECONDS, CLAIMQ_EXIT_WHEN_EMPTY=1. With PROVIDER_URL set, the
// demo send POSTs the payload there (and alreadySent() asks GET PROVIDER_URL/<key>); without it,
// it only logs. An item's traceparent (the agent's trace) goes along as the traceparent header on
// the calls to the provider and on complete and fail. Each complete or fail also claims the next
// item (next), one call per item. SIGTERM or SIGINT: finish the item in hand, then exit 0.
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

const env = process.env;
const { values: args } = parseArgs({
  options: {
    url: { type: 'string', default: env.CLAIMQ_URL ?? 'http://localhost:8080' },
    queue: { type: 'string', default: env.CLAIMQ_QUEUE },
    worker: { type: 'string', default: env.CLAIMQ_WORKER ?? `${hostname()}-${process.pid}` },
    'api-key': { type: 'string', default: env.CLAIMQ_API_KEY },
    'lease-seconds': { type: 'string', default: env.CLAIMQ_LEASE_SECONDS ?? '60' },
    'wait-seconds': { type: 'string', default: env.CLAIMQ_WAIT_SECONDS ?? '20' },
    'exit-when-empty': { type: 'boolean', default: env.CLAIMQ_EXIT_WHEN_EMPTY === '1' },
  },
});
if (!args.queue) {
  console.error('worker.mjs: --queue or CLAIMQ_QUEUE is required');
  process.exit(2);
}
const baseUrl = args.url.replace(/\/$/, '');
const leaseSeconds = Number(args['lease-seconds']);
const waitSeconds = Number(args['wait-seconds']);
// The API key and the claim token in hand are never written to the log, whoever echoes them.
const secrets = { apiKey: args['api-key'], claimToken: undefined };
const log = (message) => {
  let line = String(message);
  for (const secret of Object.values(secrets)) {
    if (secret) line = line.split(secret).join('<redacted>');
  }
  console.log(`${args.worker}: ${line}`);
};

const stop = new AbortController(); // aborted by SIGTERM/SIGINT: no new claims, no more waiting
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => stop.abort());

/** claimq did not answer usefully (connection error, timeout, 5xx): try again later. */
class Transient extends Error {}
/** 409: this claim is no longer current. Stop working on the item; never redo the send. */
class ClaimGone extends Error {}

async function post(path, body, timeoutSeconds = 10, extraHeaders = {}) {
  const headers = { 'Content-Type': 'application/json', ...extraHeaders };
  if (args['api-key']) headers.Authorization = `Bearer ${args['api-key']}`;
  let response;
  let text;
  try {
    response = await fetch(baseUrl + path, {
      method: 'POST', headers, body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutSeconds * 1000),
    });
    text = await response.text(); // the answer is lost as surely when its body is cut off
  } catch (error) { // refused, reset, timed out
    throw new Transient(`${error.cause?.code ?? error.name}`);
  }
  if (response.status === 409) throw new ClaimGone(text);
  if (response.status >= 500) throw new Transient(`claimq answered ${response.status}`);
  if (!response.ok) throw new Error(`claimq refused ${path}: ${response.status} ${text}`);
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    throw new Transient(`claimq answered ${response.status} with no JSON: ${text.slice(0, 200)}`);
  }
  return { status: response.status, body: parsed };
}

/** A claimed item, as claim-next or a report's next answers it; anything else is no item. */
const isClaimedItem = (body) =>
  body !== null && typeof body === 'object' && typeof body.claimToken === 'string'
  && typeof body.id === 'string';

/**
 * complete and fail are repeat-safe, so a lost answer is simply asked again, for long enough
 * (about a minute and a half) to outlast a claimq restart.
 */
async function finish(path, body, headers = {}, tries = 10, timeoutSeconds = 10) {
  for (let attempt = 1; ; attempt++) {
    // A stopping worker claims nothing more: a report made again after SIGTERM (its first try
    // refused or lost) asks for no next item.
    if (stop.signal.aborted && body.next !== undefined) body = { ...body, next: undefined };
    try {
      return await post(path, body, timeoutSeconds, headers);
    } catch (error) {
      if (!(error instanceof Transient)) throw error;
      if (attempt === tries) {
        const reason = `${error.message}; gave up after ${tries} tries`;
        throw new Transient(`${path}: ${reason}, the lease will release the item`);
      }
      const delay = backoff(attempt);
      log(`${path}: ${error.message}; again in ${delay.toFixed(1)}s`);
      await sleep(delay * 1000); // finishing outlives a SIGTERM
    }
  }
}

/** Full jitter: a random delay up to 0.5s * 2^attempt, so restarted workers spread out. */
const backoff = (attempt, cap = 30) => Math.random() * Math.min(cap, 0.5 * 2 ** attempt);

/** The agent's trace, when the item carries one: continued by each call made for it. */
const trace = (item) => (item.traceparent ? { traceparent: item.traceparent } : {});

/**
 * The side effect. Always pass item.idempotencyKey to the provider: if this item is ever sent
 * twice (a stale worker, a crash before complete), the provider makes it one send.
 */
async function send(item) {
  if (!env.PROVIDER_URL) {
    log(`item ${item.id}: would send ${JSON.stringify(item.payload)}`);
    return { outcome: 'done' };
  }
  let response;
  try {
    response = await fetch(env.PROVIDER_URL, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json', 'Idempotency-Key': item.idempotencyKey, ...trace(item),
      },
      body: JSON.stringify(item.payload),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    const code = error.cause?.code ?? error.name;
    if (NOT_SENT.has(code)) return { outcome: 'retry', error: `provider unreachable: ${code}` };
    // A reset, a closed socket, a timeout: the request may have reached the provider.
    return { outcome: 'unknown', error: `provider may have acted: ${code}` };
  }
  // A 2xx is a send whatever its body says (none, text, a reset while reading it): an unreadable
  // body only means there is no reference.
  const text = await response.text().catch(() => '');
  if (response.ok) return { outcome: 'done', externalRef: referenceIn(text) };
  const error = `provider answered ${response.status}: ${excerpt(text)}`;
  if (response.status === 408 || response.status === 429 || response.status >= 500) {
    const retryAfter = response.headers.get('Retry-After')?.trim();
    // claimq takes whole seconds up to a day; an HTTP-date or garbage leaves claimq's backoff.
    const retryAfterSeconds = /^\d+$/.test(retryAfter ?? '')
      ? Math.min(Number(retryAfter), MAX_RETRY_AFTER_SECONDS) : undefined;
    return { outcome: 'retry', error, retryAfterSeconds };
  }
  return { outcome: 'permanent', error }; // any other 4xx: this request will never succeed
}

const MAX_RETRY_AFTER_SECONDS = 86400; // the longest retryAfterSeconds claimq takes

/** Errors before the request went out: the provider cannot have acted. */
const NOT_SENT = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT',
]);

/** The first 500 characters, cut between code points: half a surrogate pair is not valid UTF-8. */
function excerpt(text) {
  return Array.from(text.slice(0, 1000)).slice(0, 500).join('');
}

/** The provider's id as claimq's externalRef, which is a string: a numeric id as its digits. */
function reference(id) {
  return id == null ? undefined : typeof id === 'string' ? id : JSON.stringify(id);
}

/** The reference in a provider's 2xx body, or undefined when the body holds none it can read. */
function referenceIn(text) {
  try {
    return reference(JSON.parse(text)?.id);
  } catch {
    return undefined;
  }
}

/**
 * Asks your provider, by idempotency key, whether an earlier attempt's send of this item went
 * through: a done outcome with its reference if it did, null if it did not (send it), or a retry
 * when the provider cannot tell, since sending then might send twice. The demo provider answers
 * GET PROVIDER_URL/<key> with 200 {"id": ...} or 404.
 */
async function alreadySent(item) {
  if (!env.PROVIDER_URL) return null; // nothing to ask; the demo send only logs
  const unsure = 'could not ask the provider whether an earlier attempt sent: ';
  const url = `${env.PROVIDER_URL.replace(/\/$/, '')}/${encodeURIComponent(item.idempotencyKey)}`;
  let response;
  try {
    response = await fetch(url, { headers: trace(item), signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    return { outcome: 'retry', error: `${unsure}${error.cause?.code ?? error.name}` };
  }
  const text = await response.text().catch(() => '');
  if (response.status === 404) return null;
  if (response.status !== 200) {
    return { outcome: 'retry', error: `${unsure}provider answered ${response.status}: ${excerpt(text)}` };
  }
  return { outcome: 'done', externalRef: referenceIn(text) }; // it did send
}

/**
 * send(), except that a claim saying an earlier attempt may have sent asks the provider first:
 * what it says is then the outcome, and only "not sent" leads to a send.
 */
async function sendUnlessSent(item) {
  if (item.possiblySent) {
    log(`item ${item.id}: an earlier attempt may have sent (${(item.priorAttempts ?? []).length} before)`);
    const result = await alreadySent(item);
    if (result) {
      if (result.outcome === 'done') log(`item ${item.id}: the provider has that send; completing with it`);
      return result;
    }
  }
  return send(item);
}

/**
 * Extends the lease every third of it while the send runs, so a slow send keeps its claim. An
 * answer saying an earlier claim's send went through after all ends the heartbeats and is kept.
 * Returns a stop function, which waits for a heartbeat in flight and then answers that earlier
 * send (its alreadySent), or null.
 */
function startHeartbeat(item) {
  let earlierSend = null;
  let inFlight = null; // one heartbeat at a time, awaited on stop so its answer is not lost
  const beat = async () => {
    try {
      const { body } = await post(`/v1/items/${item.id}/heartbeat`, { claimToken: item.claimToken });
      if (body && body.alreadySent) {
        log(`item ${item.id}: heartbeat says attempt ${body.alreadySent.attempt} sent it already`);
        earlierSend = body.alreadySent;
        clearInterval(timer);
      }
    } catch (error) {
      if (error instanceof ClaimGone) {
        log(`item ${item.id}: heartbeat answered 409: the claim is gone`);
        clearInterval(timer);
      } else {
        log(`item ${item.id}: heartbeat failed (${error.message}); trying again`);
      }
    }
  };
  const timer = setInterval(() => {
    if (!inFlight) inFlight = beat().finally(() => { inFlight = null; });
  }, (leaseSeconds / 3) * 1000);
  return async () => {
    clearInterval(timer);
    await inFlight;
    return earlierSend;
  };
}

/**
 * Says this attempt is about to send, so that if it ends without a complete the next claim is
 * flagged possiblySent (or the item held for a human) rather than sent again blindly.
 */
async function declareIntent(item) {
  try {
    const { body } = await finish(`/v1/items/${item.id}/intent`, { claimToken: item.claimToken });
    if (body && body.alreadySent) {
      // An earlier claim's send went through after all: complete with it, do not send.
      log(`item ${item.id}: already sent by attempt ${body.alreadySent.attempt}; completing with it`);
      await finish(`/v1/items/${item.id}/complete`,
        { claimToken: item.claimToken, externalRef: body.alreadySent.externalRef }, trace(item));
      return false;
    }
  } catch (error) {
    log(`item ${item.id}: ${error instanceof ClaimGone ? 'claim gone before sending' : error.message}; not sending`);
    return false;
  }
  return true;
}

/**
 * Sends the item and reports it. The report asks for the next item too (one call per item) unless
 * the worker is stopping; answers that next item, or null: then claim as usual.
 */
async function workOn(item) {
  secrets.claimToken = item.claimToken;
  if (!(await declareIntent(item))) return null;
  const stopHeartbeat = startHeartbeat(item);
  let result, earlierSend;
  try {
    result = await sendUnlessSent(item);
  } catch (error) { // a bug in send(): report it rather than hold the item
    result = { outcome: 'unknown', error: `worker error: ${error}` };
  } finally {
    earlierSend = await stopHeartbeat();
  }
  if (earlierSend && result.outcome === 'done') {
    // Told too late: this send went out as well. Its own reference is reported, so that claimq
    // counts a second send (duplicateSends) where the provider made one.
    log(`item ${item.id}: attempt ${earlierSend.attempt} sent it too;`
      + ' completing with this send\'s reference');
  } else if (earlierSend) {
    // That earlier send is the item's send, and this one did not go out: complete with it.
    log(`item ${item.id}: completing with attempt ${earlierSend.attempt}'s send`
      + ` instead of this send's outcome (${result.outcome})`);
    result = { outcome: 'done', externalRef: earlierSend.externalRef ?? undefined };
  }
  const path = `/v1/items/${item.id}/`;
  // A stopping worker claims nothing more. A repeated report answers next: null (its lost first
  // answer's item waits for its lease to end), so the wait stays within the call's timeout.
  const next = stop.signal.aborted ? undefined : claimBody;
  try {
    let answer;
    if (result.outcome === 'done') {
      ({ body: answer } = await finish(path + 'complete',
        { claimToken: item.claimToken, externalRef: result.externalRef, next },
        trace(item), 10, waitSeconds + 10));
      log(`item ${item.id}: done (${result.externalRef})`);
    } else {
      ({ body: answer } = await finish(path + 'fail', {
        claimToken: item.claimToken,
        error: result.error,
        retryable: result.outcome !== 'permanent',
        // unknown: the provider may have acted, so the next claim asks it before sending again.
        sent: result.outcome === 'unknown' ? 'unknown' : undefined,
        retryAfterSeconds: result.retryAfterSeconds,
        next,
      }, trace(item), 10, waitSeconds + 10));
      log(`item ${item.id}: ${result.error}, now ${answer?.state}`);
    }
    // No next in the answer (a claimq without it): claim as usual.
    return (next && isClaimedItem(answer?.next) && answer.next) || null;
  } catch (error) {
    if (error instanceof ClaimGone) {
      // Another claim owns the item now. The provider has our idempotency key, so the next send
      // of this item is recognised as this one: nothing to undo, nothing to redo.
      log(`item ${item.id}: claim gone; leaving the item to its current claim`);
    } else {
      log(`item ${item.id}: ${error.message}`);
    }
  }
  return null;
}

const claimBody = { worker: args.worker, leaseSeconds, waitSeconds };
let failures = 0;
let nextItem = null; // claimed by the last report
while (nextItem || !stop.signal.aborted) {
  if (nextItem) { // a claimed item is finished even when stopping
    nextItem = await workOn(nextItem);
    continue;
  }
  let claimed;
  try {
    claimed = await post(`/v1/queues/${encodeURIComponent(args.queue)}/claim`, claimBody, waitSeconds + 10);
    // A 200 without an item (a proxy's empty answer, say) is a failed claim like any other.
    if (claimed.status === 200 && !isClaimedItem(claimed.body)) {
      // Its field names, not its values: a claimToken in it must not reach the log.
      const holds = claimed.body && typeof claimed.body === 'object'
        ? `fields: ${Object.keys(claimed.body).sort().join(', ')}` : typeof claimed.body;
      throw new Transient(`claim answered 200 without an item (${holds})`);
    }
    failures = 0;
  } catch (error) {
    const delay = backoff(++failures);
    log(`claim: ${error.message}; again in ${delay.toFixed(1)}s`);
    await sleep(delay * 1000, undefined, { signal: stop.signal }).catch(() => {});
    continue;
  }
  if (claimed.status === 204) { // nothing due within waitSeconds
    if (args['exit-when-empty']) {
      log(`queue ${args.queue} is empty; exiting`);
      break;
    }
    continue;
  }
  nextItem = await workOn(claimed.body); // a claimed item is finished even when stopping
}
log('stopped');
