// Held items: work proposed on a queue that requires approval, waiting for an operator. Oldest
// proposals are at the end of each page, newest first, paged with the API's keyset cursor.

import { append, h, heading, when } from './dom.js';
import { pageThrough } from './pages.js';

export async function render(main, { params, me }) {
  const queue = params.get('queue') || '';
  const form = h('form', { class: 'filters', id: 'held-filters', role: 'search' },
    h('div', { class: 'field' }, h('label', { for: 'held-queue' }, 'Queue'),
      h('input', { id: 'held-queue', name: 'queue', type: 'text', value: queue,
        spellcheck: 'false' })),
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', id: 'held-apply' }, 'Filter'),
      h('a', { href: '#/held', class: 'button-like' }, 'Clear')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = new FormData(form).get('queue');
    location.hash = chosen ? `#/held?${new URLSearchParams({ queue: chosen })}` : '#/held';
  });

  const rows = h('tbody', {});
  const status = h('p', { class: 'hint', 'aria-live': 'polite', id: 'held-count' });
  const more = h('p', {});
  const bulk = me.operator
    ? h('p', {}, h('a', { href: `#/bulk?action=approve${queue ? `&queue=${encodeURIComponent(queue)}` : ''}` },
      'Approve or reject everything held here, in bulk'))
    : null;
  append(main, heading('Held for approval'), form, bulk,
    h('section', { 'aria-labelledby': 'held-results' },
      h('h2', { id: 'held-results' }, 'Proposals'),
      status,
      h('div', { class: 'table' }, h('table', {},
        h('caption', {}, 'Held items, newest first'),
        h('thead', {}, h('tr', {}, ['Item', 'Queue', 'Dedupe key', 'Proposed by', 'Held since']
          .map((c) => h('th', { scope: 'col' }, c)))),
        rows)),
      more));

  await pageThrough({
    query: { state: 'held', ...(queue ? { queue } : {}) },
    rows,
    row,
    status,
    more,
    refused: 'Held items could not be listed',
    moreId: 'held-more',
    describe: (shown, hasMore) => (shown === 0 ? 'Nothing waits for approval.'
      : `${shown} held item${shown === 1 ? '' : 's'} shown${hasMore ? ', more to load' : ''}.`),
  });
}

function row(item) {
  const cell = (label, ...content) => h('td', { 'data-label': label }, ...content);
  return h('tr', {},
    cell('Item', h('a', { href: `#/items/${item.id}`, id: `held-${item.id}` }, `Item ${item.id}`)),
    cell('Queue', item.queue),
    cell('Dedupe key', h('code', {}, item.dedupeKey)),
    cell('Proposed by', item.enqueuedBy || '—'),
    cell('Held since', when(item.createdAt)));
}
