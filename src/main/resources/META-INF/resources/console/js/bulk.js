// Bulk: retry, cancel, approve or reject everything that matches a filter. A dry run first says
// how many and which; only the confirmation acts, on exactly those items, and says what it did.

import { ApiError, outcomeUnknown, post } from './api.js';
import { acting, append, fieldProblem, h, heading, markField, problem, replace, unknown } from './dom.js';
import * as filters from './filters.js';
import { Typed } from './json.js';
import { failure } from './overview.js';

/** Per action: the states it takes (the first is the API's default) and its words. */
const ACTIONS = {
  retry: { states: ['failed', 'cancelled'], done: 'retried', verb: 'Retry' },
  cancel: { states: ['failed', 'pending'], done: 'cancelled', verb: 'Cancel' },
  // Held items only: the API takes no state and no reason filter for these.
  approve: { states: ['held'], done: 'approved', verb: 'Approve', decision: true },
  reject: { states: ['held'], done: 'rejected', verb: 'Reject', decision: true },
};

export async function render(main, { params, me, say }) {
  append(main, heading('Bulk actions'));
  if (!me.operator) {
    append(main, h('p', {}, 'Bulk actions need an operator key.'));
    return;
  }
  // Its own actions only: ?action=constructor must not find Object's members. Any other is retry.
  const action = Object.hasOwn(ACTIONS, params.get('action')) ? params.get('action') : 'retry';
  const radio = (value, label) => h('label', { class: 'choice' },
    h('input', { type: 'radio', name: 'action', value, id: `bulk-${value}`,
      checked: value === action }), label);
  const state = h('select', { id: 'bulk-state', name: 'state' });
  const form = h('form', { id: 'bulk-form', class: 'filters' },
    h('fieldset', {}, h('legend', {}, 'Action'), radio('retry', 'Retry'), radio('cancel', 'Cancel'),
      radio('approve', 'Approve held'), radio('reject', 'Reject held')),
    h('div', { class: 'field' }, h('label', { for: 'bulk-state' }, 'Items in state'), state),
    filters.fields(params, 'bulk'),
    h('div', { class: 'field', id: 'bulk-why' }, h('label', { for: 'bulk-rejection' },
      'Why reject (each proposer reads it)'),
    h('textarea', { id: 'bulk-rejection', name: 'rejection', rows: '2' }),
    fieldProblem('bulk-rejection')),
    h('div', { class: 'field' }, h('label', { for: 'bulk-limit' }, 'At most (1–500)'),
      h('input', { id: 'bulk-limit', name: 'limit', type: 'text', inputmode: 'numeric',
        value: params.get('limit') || '100' }), fieldProblem('bulk-limit')),
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', id: 'preview' }, 'Preview (dry run)')));
  const out = h('section', { 'aria-labelledby': 'bulk-result-title', id: 'bulk-result' });
  append(main, form, out);

  const states = () => ACTIONS[chosenAction()].states;
  // From the radios, not FormData: while a request is in flight they are disabled, so left out.
  const chosenAction = () => form.elements.action.value;
  function fillStates() {
    const keep = state.value || params.get('state');
    replace(state, states().map((s) => h('option', { value: s, selected: s === keep }, s)));
    // What does not apply to the chosen action is not shown, so nothing typed is dropped unseen.
    const which = chosenAction();
    form.querySelector('#bulk-why').hidden = which !== 'reject';
    form.querySelector('#bulk-reason').closest('.field').hidden = ACTIONS[which].decision;
  }
  fillStates();
  form.addEventListener('change', (event) => {
    if (event.target.name === 'action') {
      fillStates();
      replace(out);
    }
  });

  /** The request body: the filters, the state, and the limit as typed (the API judges it). */
  function request(dryRun) {
    const data = new FormData(form);
    const limit = data.get('limit');
    const which = chosenAction();
    const { reason, ...window } = filters.read(form);
    return {
      ...window,
      ...(ACTIONS[which].decision ? {} : { state: data.get('state'), ...(reason ? { reason } : {}) }),
      ...(which === 'reject' ? { reason: data.get('rejection') } : {}),
      dryRun,
      ...(limit === '' ? {} : { limit: /^-?\d+$/.test(limit) ? new Typed(limit) : limit }),
    };
  }

  // The whole screen waits for a dry run: an earlier preview's confirmation is not pressed while
  // the preview that replaces it is on its way.
  form.addEventListener('submit', acting(() => preview(chosenAction(), request(true)), 'main'));

  /** The dry run of the action with this body, and the confirmation that acts on what it shows. */
  async function preview(which, body) {
    let found;
    try {
      found = await post(`/v1/items:${which}`, body);
    } catch (e) {
      replace(out, problem(e, 'The dry run was refused'));
      if (e instanceof ApiError) {
        // A reject's reason is the API's 'reason', typed into "Why reject" (the filter's
        // "Reason contains" is hidden for it).
        markField(form, { field: which === 'reject' && e.field === 'reason' ? 'rejection' : e.field,
          fieldMessage: e.fieldMessage });
      } else {
        markField(form, {});
      }
      return;
    }
    markField(form, {}); // an earlier refusal's marks go
    const words = ACTIONS[which];
    const count = found.items.length;
    const title = h('h2', { id: 'bulk-result-title', tabindex: '-1' }, count === 0
      ? `No ${body.state || 'held'} item matches: nothing to ${which}.`
      : `${count}${found.more ? '+' : ''} item${count === 1 ? '' : 's'} will be ${words.done}`
        + `${found.more ? ` (the first ${count}; more match beyond the limit)` : ''}:`);
    // The confirmation acts on what was previewed: it names the preview (previewTag), so that it
    // does nothing if any item shown changed since. Items that change after the preview (a new
    // failure, say) are left out by an updatedBefore just past the newest item shown, so that a
    // storm of new failures does not refuse every confirmation.
    const upTo = body.updatedBefore || (count === 0 ? undefined
      : new Date(Math.max(...found.items.map((i) => Date.parse(i.updatedAt))) + 1).toISOString());
    const confirm = count === 0 ? null : h('button', { type: 'button', id: 'confirm',
      class: which === 'cancel' || which === 'reject' ? 'danger' : null,
      onclick: acting(() => run(which, body, { updatedBefore: upTo, previewTag: found.previewTag }),
        'main') },
    `${words.verb} ${count} item${count === 1 ? '' : 's'}`);
    replace(out, title, h('ul', { class: 'failures', id: 'bulk-items' }, found.items.map(failure)),
      confirm ? [
        h('p', { class: 'hint' }, `Acts on exactly these items, as shown (changed before ${upTo}):`
          + ' if any of them changes first, nothing is done and a new preview shows what matches.'),
        h('div', { class: 'buttons' }, confirm,
          h('button', { type: 'button', id: 'discard',
            // The button goes with the preview; the focus goes back to the one that made it.
            onclick: () => { replace(out); form.querySelector('#preview').focus(); } }, 'Discard')),
      ] : null);
    title.focus();
  }

  async function run(which, body, previewed) {
    let done;
    try {
      done = await post(`/v1/items:${which}`, { ...body, dryRun: false, ...previewed });
    } catch (e) {
      if (e.status === 409 && e.problem?.type?.endsWith('/preview-changed')) {
        await preview(which, body);
        say(`Bulk ${which} refused (409): nothing was done. The items changed since the preview`
          + ' (one was changed by someone else, or no longer matches, or another matches now);'
          + ' the preview below is what matches now.', 'warning');
        return;
      }
      if (!outcomeUnknown(e)) {
        replace(out, problem(e, `The bulk ${which} was refused`));
        return;
      }
      // Nobody knows how far it got: a new dry run shows what still matches.
      await preview(which, body);
      say(`${unknown(`Bulk ${which}`, e)} Some or all of the items may have been`
        + ` ${ACTIONS[which].done}; the preview below is what matches now.`, 'warning');
      return;
    }
    const count = done.items.length;
    const title = h('h2', { id: 'bulk-result-title', tabindex: '-1' },
      `${count} item${count === 1 ? '' : 's'} ${ACTIONS[which].done}`
        + `${done.more ? '; more match: preview again for the next ones' : ''}.`);
    replace(out, title, h('ul', { class: 'failures', id: 'bulk-items' }, done.items.map(failure)));
    say(`${count} item${count === 1 ? '' : 's'} ${ACTIONS[which].done}.`, 'ok');
    title.focus();
  }
}
