// One item: why it failed, what each attempt did, what operators did, its payload as stored,
// and the operator's actions on it: retry, cancel, resolve.

import { ApiError, call, get, outcomeUnknown } from './api.js';
import {
  acting, append, data, fieldProblem, h, heading, markField, problem, replace, sentence, unknown, when,
} from './dom.js';
import { member, pretty } from './json.js';

export async function render(main, { rest, me, say }) {
  const id = rest[0] || '';
  append(main, heading(`Item ${id}`));
  const body = h('div', {});
  append(main, body);

  // The version the page shows: every action names it, so that it is made only if the item has
  // not changed since (it may have been retried and failed again: a second retry would send again;
  // or retried, and a cancel would cancel the retry).
  let etag = null;

  async function load() {
    let answer;
    try {
      answer = await call(`/v1/items/${encodeURIComponent(id)}`);
    } catch (e) {
      replace(body, problem(e, `Item ${id} could not be read`));
      return null;
    }
    const item = answer.body;
    etag = answer.headers.get('ETag');
    const [attempts, actions] = await Promise.allSettled([
      get(`/v1/items/${encodeURIComponent(id)}/attempts`),
      get(`/v1/items/${encodeURIComponent(id)}/actions`),
    ]);
    replace(body,
      summary(item),
      actionsPanel(item, me, act),
      h('section', { 'aria-labelledby': 'attempts-title' },
        h('h2', { id: 'attempts-title' }, 'Attempts'),
        attempts.status === 'fulfilled' ? timeline(attempts.value.attempts)
          : problem(attempts.reason, 'Attempts could not be read')),
      h('section', { 'aria-labelledby': 'log-title' },
        h('h2', { id: 'log-title' }, "Operators' actions"),
        actions.status === 'fulfilled' ? actionLog(actions.value.actions)
          : problem(actions.reason, 'Actions could not be read')),
      h('section', { 'aria-labelledby': 'payload-title' },
        h('h2', { id: 'payload-title' }, 'Payload'),
        item.pruned ? h('p', {}, 'Pruned: this is a tombstone, its payload is gone.')
          : payload(member(answer.text, 'payload') || 'null')));
    return item;
  }

  /**
   * Runs an action and shows the item as it is after it; a refusal is said, not hidden. done is
   * what to say, or says it from the answer. The action is made only on the version the page
   * shows. When the item changed under the page, or no answer says whether the action happened,
   * the message ends with the state the item is in now. A request refused as sent (400) changed
   * nothing: the page stays as it is, with what was typed in its form, and the field the API
   * names is marked there.
   */
  async function act(label, path, options, done, form) {
    let said;
    try {
      const { body, headers } = await call(path, { method: 'POST', ifMatch: etag, ...options });
      const horizon = headers.get('Idempotency-Horizon-Passed') === 'true'
        ? ' Its provider may have forgotten the idempotency key: the next send may be a new one.'
        : '';
      said = () => [`${typeof done === 'function' ? done(body) : done}${horizon}`, 'ok'];
    } catch (e) {
      if (e.status === 400) {
        say(...refusal(label, e, null));
        if (!form || !markField(form, e)) document.getElementById('state')?.focus({ preventScroll: true });
        return;
      }
      said = (now) => refusal(label, e, now);
      if (e.status === 409 && e.problem.type?.endsWith('/idempotency-horizon-passed')) {
        horizonOffer = true;
      }
    }
    say(...said(await load()));
    document.getElementById('state')?.focus({ preventScroll: true });
  }

  let horizonOffer = false;
  function actionsPanel(item, who, run) {
    const retry = (force) => run('Retry', `/v1/items/${item.id}/retry`,
      { query: force ? { force: 'true' } : undefined },
      (answer) => answer?.state === 'held'
        ? `Item ${item.id} is held again: it waits for an operator's approval.`
        : `Item ${item.id} is pending again: a worker will claim it.`);
    const buttons = [];
    if (item.state === 'failed' || item.state === 'cancelled') {
      buttons.push(h('button', { type: 'button', id: 'retry', onclick: acting(() => retry(false)) },
        'Retry'));
      if (horizonOffer) {
        buttons.push(h('button', { type: 'button', id: 'retry-force', class: 'danger',
          onclick: acting(() => retry(true)) }, 'Retry past the idempotency horizon'));
      }
    }
    if (item.state === 'pending' || item.state === 'failed') {
      const confirm = h('button', { type: 'button', id: 'cancel-confirm', class: 'danger', hidden: true,
        onclick: acting(() => run('Cancel', `/v1/items/${item.id}/cancel`, {},
          `Item ${item.id} is cancelled: no worker will claim it.`)),
        // Escape backs out, as from a dialog: the confirmation goes, the focus goes back.
        onkeydown: (event) => {
          if (event.key !== 'Escape') return;
          confirm.hidden = true;
          ask.hidden = false;
          ask.focus();
        } }, 'Yes, cancel it');
      const ask = h('button', { type: 'button', id: 'cancel',
        onclick: (event) => {
          event.target.hidden = true;
          confirm.hidden = false;
          confirm.focus();
        } }, 'Cancel…');
      buttons.push(ask, confirm);
    }
    if (item.state === 'held') {
      buttons.push(h('button', { type: 'button', id: 'approve',
        onclick: acting(() => run('Approve', `/v1/items/${item.id}/approve`, { body: {} },
          `Item ${item.id} is approved: pending, a worker will claim it.`)) }, 'Approve'));
    }
    const resolve = item.state === 'failed' ? resolveForm(item, run)
      : item.state === 'held' ? rejectForm(item, run) : null;
    const panel = h('section', { 'aria-labelledby': 'actions-title', id: 'actions', class: 'actions',
      hidden: !who.operator },
      h('h2', { id: 'actions-title' }, 'Actions'),
      buttons.length || resolve ? h('div', { class: 'buttons' }, buttons)
        : h('p', {}, `No action applies to a ${item.state} item.`),
      resolve);
    horizonOffer = false;
    return panel;
  }

  await load();
}

function resolveForm(item, run) {
  const form = h('form', { id: 'resolve-form' },
    h('div', { class: 'field' }, h('label', { for: 'resolve-ref' }, "Provider's reference (externalRef)"),
      h('input', { id: 'resolve-ref', name: 'externalRef', type: 'text' }), fieldProblem('resolve-ref')),
    h('div', { class: 'field' }, h('label', { for: 'resolve-note' }, 'Note (why)'),
      h('textarea', { id: 'resolve-note', name: 'note', rows: '2' }), fieldProblem('resolve-note')),
    h('button', { type: 'submit', id: 'resolve' }, 'Resolve as done'));
  form.addEventListener('submit', acting(() => {
    const data = new FormData(form);
    const body = {};
    if (data.get('externalRef')) body.externalRef = data.get('externalRef');
    if (data.get('note')) body.note = data.get('note');
    return run('Resolve', `/v1/items/${item.id}/resolve`, { body },
      `Item ${item.id} is done, resolved by hand.`, form);
  }));
  // Folded away: the rarer answer, for a send the provider confirms did happen.
  return h('details', { class: 'resolve' },
    h('summary', { id: 'resolve-open' }, 'Resolve: it was sent after all…'), form);
}

/** A rejection needs a reason: it becomes the item's last error, which its proposer reads. */
function rejectForm(item, run) {
  const form = h('form', { id: 'reject-form' },
    h('div', { class: 'field' }, h('label', { for: 'reject-reason' }, 'Why not (the proposer reads it)'),
      h('textarea', { id: 'reject-reason', name: 'reason', rows: '2', required: true }),
      fieldProblem('reject-reason')),
    h('button', { type: 'submit', id: 'reject', class: 'danger' }, 'Reject: never send it'));
  form.addEventListener('submit', acting(() => run('Reject', `/v1/items/${item.id}/reject`,
    { body: { reason: new FormData(form).get('reason') } },
    `Item ${item.id} is rejected: cancelled, it will not be sent.`, form)));
  return form;
}

/**
 * What to say of a refused or unanswered action, given the item as read again (null if it could
 * not be): a state conflict means someone changed it first; no answer or a 5xx means nobody knows.
 */
function refusal(label, e, now) {
  const status = e instanceof ApiError && e.status ? ` (${e.status})` : '';
  const as = now ? `it is now ${now.state}, as shown below` : 'it could not be read again';
  if (outcomeUnknown(e)) {
    return [`${unknown(label, e)} It may or may not have been done;`
      + ` ${as}. Check it before you act again.`, 'warning'];
  }
  if (e.status === 412 && e.problem.type?.endsWith('/item-changed')) {
    // The API's detail speaks of ETags; what the operator needs is that the page was stale.
    return [`${label} refused${status}: nothing was done. It changed since this page showed it:`
      + ` ${as}. Check it, and act again if it still applies.`, 'error'];
  }
  if (e.status === 409 && e.problem.type?.endsWith('/state-conflict')) {
    return [`${label} refused${status}: ${sentence(e.message)} It changed since this page showed it:`
      + ` ${as}.`, 'error'];
  }
  return [`${label} refused${status}: ${e.message}`, 'error'];
}

function summary(item) {
  const fact = (term, ...value) => h('div', {}, h('dt', {}, term), h('dd', {}, ...value));
  const warnings = [];
  if (item.duplicateSends > 0) {
    warnings.push(h('p', { class: 'warning', id: 'duplicates' },
      `Sent twice: ${item.duplicateSends} duplicate send${item.duplicateSends === 1 ? '' : 's'}:`
        + ' two attempts reported a send with different references (see Attempts).'));
  }
  if (item.alreadySent) {
    warnings.push(h('p', { class: 'warning', id: 'already-sent' },
      `Already sent: attempt ${item.alreadySent.attempt}'s late complete reported `,
      data(item.alreadySent.externalRef), '; the current worker should complete, not send.'));
  }
  return h('section', { 'aria-label': 'Summary', class: 'summary-box' },
    item.lastError ? h('p', { class: 'reason big', id: 'reason' }, item.lastError) : null,
    warnings,
    h('dl', { class: 'facts' },
      fact('State', h('span', { id: 'state', tabindex: '-1', class: `badge ${item.state}` },
        item.state)),
      fact('Queue', h('a', { href: `#/queues/${encodeURIComponent(item.queue)}` }, item.queue)),
      fact('Attempts', `${item.attempts} of ${item.maxAttempts}`),
      fact('Last worker', item.claimedBy || '—'),
      item.leaseExpiresAt ? fact('Lease ends', h('time', { datetime: item.leaseExpiresAt },
        item.leaseExpiresAt)) : null,
      fact('Updated', when(item.updatedAt)),
      fact('Created', when(item.createdAt)),
      // Only what waits to be claimed comes due; for the rest, the time means nothing now.
      item.state === 'pending' || item.state === 'held'
        ? fact('Due', when(item.runAt, { ahead: true })) : null,
      fact('Dedupe key', h('code', {}, item.dedupeKey)),
      fact('Idempotency key', h('code', {}, item.idempotencyKey)),
      fact('External reference', item.externalRef ? h('code', {}, item.externalRef) : '—'),
      fact(item.state === 'held' ? 'Proposed by' : 'Enqueued by', item.enqueuedBy || '—'),
      item.traceparent ? fact('Trace', h('code', {}, item.traceparent)) : null));
}

/** The payload as stored, indented where that stays readable, and a note where it does not. */
function payload(text) {
  const shown = pretty(text);
  return [shown.note ? h('p', { class: 'hint', id: 'payload-note' }, shown.note) : null,
    h('pre', { class: 'payload', id: 'payload', tabindex: '0', 'aria-label': 'Payload',
      'aria-describedby': shown.note ? 'payload-note' : null }, shown.text)];
}

function timeline(attempts) {
  if (attempts.length === 0) return h('p', {}, 'Never claimed.');
  return h('ol', { class: 'timeline', id: 'attempts' }, attempts.map((a) => h('li', {},
    h('p', { class: 'attempt-head' },
      h('strong', {}, `Attempt ${a.attempt}`), ' by ', data(a.worker || 'an unnamed worker'), ': ',
      h('span', { class: `badge ${a.outcome || 'open'}` }, a.outcome || 'still open')),
    h('ul', { class: 'steps' },
      h('li', {}, 'claimed ', when(a.claimedAt)),
      a.intentAt ? h('li', {}, 'declared it was about to send ', when(a.intentAt)) : null,
      a.finishedAt ? h('li', {}, 'finished ', when(a.finishedAt),
        a.finishedBy ? [' (key ', data(a.finishedBy), ')'] : '') : null,
      a.sentUnknown ? h('li', { class: 'warning' }, 'the worker could not tell whether it sent')
        : null,
      a.error ? h('li', { class: 'reason' }, a.error) : null,
      a.lateSuccess ? h('li', { class: 'warning' },
        'late success: reported ', data(a.lateSuccess.externalRef), ' ', when(a.lateSuccess.reportedAt),
        a.lateSuccess.reportedBy ? [' (key ', data(a.lateSuccess.reportedBy), ')'] : '') : null))));
}

function actionLog(actions) {
  if (actions.length === 0) return h('p', {}, 'No operator has acted on this item.');
  return h('ol', { class: 'log', id: 'action-log' }, actions.map((a) => h('li', {},
    h('strong', {}, a.action), ' by ', data(a.actor), ' ', when(a.at),
    a.note ? h('q', {}, a.note) : null)));
}
