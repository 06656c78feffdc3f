// The filter fields that the failed list and the bulk screen share: queue, reason text and a
// time window, with the times entered in local time and sent as the instants they name.

import { h } from './dom.js';

/** The API's names for the filters, as kept in the hash: #/failed?queue=emails&reason=timeout. */
export const NAMES = ['queue', 'reason', 'updatedAfter', 'updatedBefore'];

export function fields(params, prefix) {
  const field = (name, label, input) => h('div', { class: 'field' },
    h('label', { for: `${prefix}-${name}` }, label), input);
  const text = (name, extra) => h('input', {
    id: `${prefix}-${name}`, name, type: 'text', value: params.get(name) || '', ...extra,
  });
  const time = (name) => h('input', {
    id: `${prefix}-${name}`, name, type: 'datetime-local', step: '1',
    value: toLocal(params.get(name)),
  });
  return [
    field('queue', 'Queue', text('queue', { spellcheck: 'false' })),
    field('reason', 'Reason contains', text('reason')),
    field('updatedAfter', 'Updated after (local time)', time('updatedAfter')),
    field('updatedBefore', 'Updated before (local time)', time('updatedBefore')),
  ];
}

/** The form's filters as the API takes them: times as UTC instants, empty fields left out. */
export function read(form) {
  const data = new FormData(form);
  const filters = {};
  for (const name of NAMES) {
    const value = data.get(name);
    if (!value) continue;
    filters[name] = name.startsWith('updated') ? new Date(value).toISOString() : value;
  }
  return filters;
}

export function fromParams(params) {
  const filters = {};
  for (const name of NAMES) if (params.get(name)) filters[name] = params.get(name);
  return filters;
}

export function toQuery(filters) {
  return new URLSearchParams(filters).toString();
}

/** An instant as a datetime-local value in this browser's zone, to the second. */
function toLocal(iso) {
  if (!iso) return '';
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return '';
  const local = new Date(t.getTime() - t.getTimezoneOffset() * 60000);
  return local.toISOString().slice(0, 19);
}
