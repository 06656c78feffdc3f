// Failed items: the reason first, then queue, attempts, last worker and age; filtered by
// queue, reason text and time, and paged with the API's keyset cursor as far as they go.

import { append, h, heading, when } from './dom.js';
import * as filters from './filters.js';
import { pageThrough } from './pages.js';

export async function render(main, { params, me }) {
  const chosen = filters.fromParams(params);
  const form = h('form', { class: 'filters', id: 'failed-filters', role: 'search' },
    filters.fields(params, 'failed'),
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', id: 'apply-filters' }, 'Filter'),
      h('a', { href: '#/failed', class: 'button-like' }, 'Clear')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/failed?${filters.toQuery(filters.read(form))}`;
  });

  const rows = h('tbody', {});
  const status = h('p', { class: 'hint', 'aria-live': 'polite', id: 'failed-count' });
  const more = h('p', {});
  const results = h('section', { 'aria-labelledby': 'failed-results' },
    h('h2', { id: 'failed-results' }, 'Results'),
    status,
    h('div', { class: 'table' }, h('table', {},
      h('caption', {}, 'Failed items, most recently changed first'),
      h('thead', {}, h('tr', {}, ['Reason', 'Queue', 'Attempts', 'Last worker', 'Updated']
        .map((c) => h('th', { scope: 'col' }, c)))),
      rows)),
    more);
  const bulkLink = me.operator
    ? h('p', {}, h('a', { href: `#/bulk?${filters.toQuery(chosen)}` },
      'Retry or cancel everything that matches, in bulk'))
    : null;
  append(main, heading('Failed items'), form, bulkLink, results);

  await pageThrough({
    query: { state: 'failed', ...chosen },
    rows,
    row,
    status,
    more,
    refused: 'Failed items could not be listed',
    moreId: 'load-more',
    describe: (shown, hasMore) => (shown === 0 ? 'No failed item matches.'
      : `${shown} failed item${shown === 1 ? '' : 's'} shown${hasMore ? ', more to load' : ''}.`),
  });
}

function row(item) {
  const cell = (label, ...content) => h('td', { 'data-label': label }, ...content);
  return h('tr', {},
    cell('Reason', h('a', { href: `#/items/${item.id}`, id: `row-${item.id}`, class: 'reason' },
      item.lastError || '(no reason recorded)')),
    cell('Queue', item.queue),
    cell('Attempts', `${item.attempts} of ${item.maxAttempts}`),
    cell('Last worker', item.claimedBy || '—'),
    cell('Updated', when(item.updatedAt)));
}
