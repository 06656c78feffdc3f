// Queues: pause and resume claims, and read and change a queue's policy, with who changed what.

import { ApiError, call, get, outcomeUnknown } from './api.js';
import {
  acting, append, data, fieldProblem, h, heading, markField, problem, replace, unknown, when,
} from './dom.js';
import { stringify, Typed } from './json.js';
import { pageThrough } from './pages.js';

/** The policy's settings in the API's order, with what each one means to an operator. */
const SETTINGS = [
  ['maxAttempts', 'Attempts before an item fails (1–100)'],
  ['leaseSeconds', 'Lease, seconds'],
  ['crashLoopAfter', 'Expired leases in a row that fail an item as a crash loop'],
  ['onUnknownOutcome', 'After an intent and no complete'],
  ['maxReleases', 'Releases allowed per item'],
  ['providerKeyTtl', "Provider's idempotency horizon (ISO 8601, e.g. PT24H)"],
  ['backoffBaseSeconds', 'Delay before the first retry, seconds'],
  ['backoffCapSeconds', 'Longest delay between attempts, seconds'],
  ['requireApproval', 'New items wait for an operator to approve them'],
];
/** Settings chosen from a list: their choices, the API's values as the option values. */
const CHOICES = {
  onUnknownOutcome: ['', 'retry', 'hold'],
  requireApproval: ['', 'true', 'false'],
};
const TEXT_SETTINGS = ['providerKeyTtl'];

export async function render(main, context) {
  if (context.rest[0]) return one(main, context, context.rest[0]);
  return list(main, context);
}

async function list(main, { me }) {
  append(main, heading('Queues'));
  const open = h('form', { id: 'open-queue', class: 'inline' },
    h('label', { for: 'queue-name' }, 'Open a queue by name'),
    h('input', { id: 'queue-name', name: 'queue', type: 'text', required: true,
      spellcheck: 'false' }),
    h('button', { type: 'submit' }, 'Open'));
  open.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/queues/${encodeURIComponent(new FormData(open).get('queue'))}`;
  });
  const rows = h('tbody', {});
  const status = h('p', { id: 'queues-count', 'aria-live': 'polite' });
  const more = h('div', {});
  append(main, open, status, h('div', { class: 'table' }, h('table', {},
    h('caption', {}, 'Queues, by name'),
    h('thead', {}, h('tr', {}, COLUMNS.map((c) => h('th', { scope: 'col' }, c)))),
    rows)), more);
  await pageThrough({
    path: '/v1/queues',
    field: 'queues',
    rows,
    row: (q) => h('tr', {}, [
      h('a', { href: `#/queues/${encodeURIComponent(q.queue)}` }, q.queue),
      String(q.counts.held), String(q.counts.pending), String(q.counts.failed),
      q.paused ? h('span', { class: 'badge paused' }, 'paused') : 'running',
    ].map((cell, i) => h('td', { 'data-label': COLUMNS[i] }, cell))),
    status,
    more,
    refused: 'Queues could not be listed',
    moreId: 'more-queue-pages',
    describe: (shown, hasMore) => (shown === 0 ? 'No queue has live items or a policy yet.'
      : `${shown} queue${shown === 1 ? '' : 's'} shown${hasMore ? ', more to load' : ''}.`),
  });
}

const COLUMNS = ['Queue', 'Held', 'Pending', 'Failed', 'Claims'];

async function one(main, { me, say }, queue) {
  const path = `/v1/queues/${encodeURIComponent(queue)}`;
  append(main, heading(`Queue ${queue}`));
  const body = h('div', {});
  append(main, body);

  // The version the form shows: a save names it, so that it cannot overwrite a change made since.
  let etag = null;

  async function load() {
    let policy;
    try {
      const read = await call(`${path}/policy`);
      policy = read.body;
      etag = read.headers.get('ETag');
    } catch (e) {
      replace(body, problem(e, `The policy of ${queue} could not be read`));
      return null;
    }
    const log = await get(`${path}/actions`).then((a) => a.actions, (e) => e);
    replace(body, pausePanel(policy), policyForm(policy), history(log));
    return policy;
  }

  /** No answer says whether it was done: the queue is read again, and the message says how it is. */
  async function unanswered(label, e) {
    const now = await load();
    say(`${unknown(label, e)} It may or may not have been done; ${now
      ? `claims are now ${now.paused ? 'paused' : 'running'}, and the policy below is as saved now`
      : 'the queue could not be read again'}. Check it before you act again.`, 'warning');
  }

  function pausePanel(policy) {
    const toggle = policy.paused ? 'resume' : 'pause';
    return h('section', { 'aria-labelledby': 'claims-title' },
      h('h2', { id: 'claims-title' }, 'Claims'),
      h('p', { id: 'claims-state' }, policy.paused
        ? 'Paused: claims answer 204 and workers wait; enqueues go on.'
        : 'Running: workers claim its items.'),
      // acting: the other half of the toggle comes where this one was, under a double-click.
      me.operator ? h('button', { type: 'button', id: toggle, onclick: acting(async () => {
        try {
          await call(`${path}/${toggle}`, { method: 'POST' });
          say(`Queue ${queue} ${policy.paused ? 'resumed' : 'paused'}.`, 'ok');
          await load();
        } catch (e) {
          if (outcomeUnknown(e)) await unanswered(policy.paused ? 'Resume' : 'Pause', e);
          else {
            say(`${toggle} refused (${e.status}): ${e.message}`, 'error');
            await load();
          }
        }
        document.getElementById(policy.paused ? 'pause' : 'resume')?.focus({ preventScroll: true });
      }) }, policy.paused ? 'Resume claims' : 'Pause claims') : null);
  }

  function policyForm(policy) {
    const input = ([name, label]) => {
      const id = `policy-${name}`;
      const hint = `In effect: ${policy.effective[name] ?? 'none'}${policy[name] === null
        ? ' (the service default)' : ''}.`;
      const control = CHOICES[name]
        ? h('select', { id, name, 'aria-describedby': `${id}-hint`, disabled: !me.operator },
          CHOICES[name].map((v) => h('option', { value: v, selected: String(policy[name] ?? '') === v },
            v || 'the service default')))
        : h('input', { id, name, type: 'text', value: policy[name] ?? '', spellcheck: 'false',
          inputmode: TEXT_SETTINGS.includes(name) ? null : 'numeric',
          'aria-describedby': `${id}-hint`, readonly: !me.operator });
      return h('div', { class: 'field' }, h('label', { for: id }, label), control,
        h('p', { class: 'hint', id: `${id}-hint` }, hint),
        fieldProblem(id));
    };
    const form = h('form', { id: 'policy-form', class: 'policy' },
      h('p', { class: 'hint' }, 'Empty means the service default.'
        + (policy.updatedAt ? ` Last changed by ${policy.updatedBy || 'a key'} at ${policy.updatedAt}.` : '')),
      SETTINGS.map(input),
      me.operator ? h('button', { type: 'submit', id: 'save-policy' }, 'Save policy') : null);
    form.addEventListener('submit', acting(async () => {
      const data = new FormData(form);
      const wanted = {};
      for (const [name] of SETTINGS) {
        const value = data.get(name);
        if (value === '' || value === null) continue;
        // Sent as typed: digits as the JSON number they spell (007 too, for the API to refuse),
        // anything else as text, for the API to refuse by name.
        if (name === 'requireApproval') wanted[name] = value === 'true';
        else {
          wanted[name] = TEXT_SETTINGS.includes(name) || name === 'onUnknownOutcome'
            || !/^-?\d+$/.test(value) ? value : new Typed(value);
        }
      }
      try {
        await call(`${path}/policy`, { method: 'PUT', body: wanted, ifMatch: etag });
        say(`Policy of ${queue} saved.`, 'ok');
        await load();
        document.getElementById('save-policy')?.focus({ preventScroll: true });
      } catch (e) {
        if (outcomeUnknown(e)) {
          await unanswered('Policy save', e);
          return;
        }
        if (e.status === 412) {
          // Someone changed it since this page read it: show theirs, and what was not saved.
          const now = await load();
          say(`Not saved: the policy of ${queue} was changed${now && now.updatedAt
            ? ` by ${now.updatedBy || 'a key'} at ${now.updatedAt}` : ''} since this page read it,`
            + ` and the form now shows it as it is. Your settings were ${stringify(wanted).text}:`
            + ' save them again if they still apply.', 'error');
          document.getElementById('save-policy')?.focus({ preventScroll: true });
          return;
        }
        say(`Policy refused${e.status ? ` (${e.status})` : ''}: ${e.message}`, 'error');
        if (e instanceof ApiError) markField(form, e);
      }
    }));
    return h('section', { 'aria-labelledby': 'policy-title' },
      h('h2', { id: 'policy-title' }, 'Policy'), form);
  }

  await load();
}

function history(log) {
  const title = h('h2', { id: 'queue-log-title' }, 'Changes');
  if (log instanceof Error) return h('section', {}, title, problem(log, 'Changes could not be read'));
  return h('section', { 'aria-labelledby': 'queue-log-title' }, title, log.length === 0
    ? h('p', {}, 'No operator has changed this queue.')
    : h('ol', { class: 'log', id: 'queue-log' }, log.map((a) => h('li', {},
      h('strong', {}, a.action), ' by ', data(a.actor), ' ', when(a.at),
      a.policy ? h('code', {}, JSON.stringify(a.policy)) : null))));
}
