// Overview: every queue's live counts, refreshed every few seconds, and the latest failures,
// reason first, so that the first screen already says what went wrong.

import { get } from './api.js';
import { append, data, h, heading, problem, seconds, table, update, when } from './dom.js';

const REFRESH_MS = 4000;
const LATEST = 10;
/** Queues shown at first, and how many more each "Show more" adds. */
const QUEUE_PAGE = 100;
/** The most queues one call of the listing answers. */
const LISTING_MAX = 500;

export async function render(main) {
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' });
  // Content that updates itself must be able to stop (WCAG 2.2.2): a screen reader reading the
  // table, or anyone reading a long reason, is not moved on every few seconds.
  let paused = false;
  let refreshedAt = null;
  const pause = h('button', { type: 'button', id: 'pause-updates', 'aria-pressed': 'false',
    onclick: () => {
      paused = !paused;
      pause.setAttribute('aria-pressed', String(paused));
      if (paused) tell();
      else refreshOnce();
    } }, 'Pause updates');
  const said = h('span');
  const stamp = h('p', { class: 'hint' }, said, ' ', pause);
  function tell() {
    const at = refreshedAt ? `Refreshed at ${refreshedAt.toLocaleTimeString()}` : 'Not refreshed yet';
    said.textContent = paused ? `${at}; updates paused.` : `${at}; every ${REFRESH_MS / 1000} s.`;
  }
  const queues = h('section', { 'aria-labelledby': 'queues-title' });
  const failures = h('section', { 'aria-labelledby': 'latest-title' });
  // Failures first: they are what an operator comes for, on a phone as on a desktop.
  append(main, heading('Overview'), summary, stamp, failures, queues);
  let wanted = QUEUE_PAGE;

  async function refresh() {
    const [queueList, latest] = await Promise.allSettled([
      queuePages(wanted),
      get('/v1/items', { state: 'failed', limit: LATEST }),
    ]);
    if (paused) return; // paused while the answers were on their way: they are not shown
    if (queueList.status === 'fulfilled') {
      const { list, totals, more } = queueList.value;
      // Read out only when it changes: a screen reader should not hear every refresh.
      const text = describe(totals);
      if (summary.textContent !== text) summary.textContent = text;
      update(queues, queueTable(list), more ? moreQueues(list.length, totals.queues) : null);
    } else {
      update(queues, h('h2', { id: 'queues-title' }, 'Queues'),
        problem(queueList.reason, 'Queues could not be listed'));
    }
    update(failures, latest.status === 'fulfilled'
      ? latestFailures(latest.value.items)
      : [h('h2', { id: 'latest-title' }, 'Latest failures'),
        problem(latest.reason, 'Failed items could not be listed')]);
    refreshedAt = new Date();
    tell();
  }

  let busy = false;
  let again = false;
  /** asked: the operator wants more queues, which a refresh under way must not drop. */
  async function refreshOnce(asked = false) {
    // A slow answer never piles up requests: a tick meanwhile is dropped, a click runs after it.
    if (busy) {
      again = again || asked;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        await refresh();
      } while (again);
    } finally {
      busy = false;
    }
  }

  function moreQueues(shown, total) {
    return h('p', {}, `${shown} of ${total} queues shown, by name. `,
      h('button', { type: 'button', id: 'more-queues',
        onclick: () => { wanted += QUEUE_PAGE; refreshOnce(true); } }, `Show ${QUEUE_PAGE} more`));
  }

  await refreshOnce();
  // A tab in the background asks nothing.
  const timer = setInterval(() => { if (!document.hidden && !paused) refreshOnce(); }, REFRESH_MS);
  return () => clearInterval(timer);
}

/**
 * The first wanted queues of GET /v1/queues, by name: as few calls as can be (each reads every
 * queue's counts), one up to 500 queues.
 */
async function queuePages(wanted) {
  let answer = await get('/v1/queues', { limit: Math.min(wanted, LISTING_MAX) });
  const list = [...answer.queues];
  while (answer.nextCursor && list.length < wanted) {
    answer = await get('/v1/queues',
      { limit: Math.min(wanted - list.length, LISTING_MAX), cursor: answer.nextCursor });
    list.push(...answer.queues);
  }
  return { list, totals: answer.totals, more: Boolean(answer.nextCursor) };
}

function describe(totals) {
  const { counts } = totals;
  return `${totals.queues} queue${totals.queues === 1 ? '' : 's'}: ${counts.held} held for approval,`
    + ` ${counts.pending} pending,`
    + ` ${counts.sending} sending, ${counts.failed} failed.`;
}

/** A count per minute, or a dash where the service does not report it. */
function perMinute(value) {
  return value === undefined || value === null ? '—' : String(value);
}

function queueTable(list) {
  if (list.length === 0) {
    return [h('h2', { id: 'queues-title' }, 'Queues'),
      h('p', {}, 'No queue has live items or a policy yet.')];
  }
  return [h('h2', { id: 'queues-title' }, 'Queues'), table('Live items by queue',
    ['Queue', 'Held', 'Pending', 'Sending', 'Failed', 'Oldest due pending', 'Done last min',
      'Failed last min', 'Claims'],
    list.map((q) => [
      h('a', { href: `#/queues/${encodeURIComponent(q.queue)}`, id: `q-${q.queue}` }, q.queue),
      q.counts.held > 0
        ? h('a', { href: `#/held?queue=${encodeURIComponent(q.queue)}`, id: `qh-${q.queue}` },
          `${q.counts.held} held, oldest ${seconds(q.oldestHeldAgeSeconds)}`)
        : '0',
      String(q.counts.pending),
      String(q.counts.sending),
      q.counts.failed > 0
        ? h('a', { href: `#/failed?queue=${encodeURIComponent(q.queue)}`, id: `qf-${q.queue}`,
          class: 'failed-count' }, `${q.counts.failed} failed`)
        : '0',
      seconds(q.oldestDuePendingAgeSeconds),
      perMinute(q.doneLastMinute),
      perMinute(q.failedLastMinute),
      q.paused ? h('span', { class: 'badge paused' }, 'paused') : 'running',
    ]))];
}

function latestFailures(items) {
  const title = h('h2', { id: 'latest-title' }, 'Latest failures');
  if (items.length === 0) return [title, h('p', {}, 'No failed items. Nothing waits for you.')];
  return [title, h('ul', { class: 'failures' }, items.map(failure)),
    h('p', {}, h('a', { href: '#/failed', id: 'all-failed' }, 'All failed items, with filters'))];
}

/** One failed (or held) item as a list entry: its reason as the link, then where and who. */
export function failure(item) {
  const what = item.lastError
    || (item.state === 'held' ? ['proposed by ', data(item.enqueuedBy || '—'), ': ',
      data(item.dedupeKey)] : '(no reason recorded)');
  return h('li', { class: 'failure' },
    h('a', { href: `#/items/${item.id}`, id: `fail-${item.id}`, class: 'reason' }, what),
    h('span', { class: 'meta' }, data(item.queue),
      ` · item ${item.id} · attempt ${item.attempts} of ${item.maxAttempts} · last worker `,
      data(item.claimedBy || '—'), ' · ', when(item.updatedAt)));
}
