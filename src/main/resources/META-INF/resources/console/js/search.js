// Search: one box for an item id, a dedupe key, an idempotency key or a provider's reference.
// What was searched stays out of the URL: dedupe keys and references can name people.

import { get } from './api.js';
import { append, h, heading, problem, replace, table, when } from './dom.js';

export async function render(main) {
  const form = h('form', { id: 'search-form', role: 'search', class: 'inline' },
    h('label', { for: 'search-q' }, 'Item id, dedupe key, idempotency key or external reference'),
    h('input', { id: 'search-q', name: 'q', type: 'search', required: true, spellcheck: 'false',
      autocomplete: 'off' }),
    h('button', { type: 'submit', id: 'search-go' }, 'Search'));
  // What is found is told in one line; the table itself is not read out as it arrives.
  const said = h('p', { class: 'visually-hidden', 'aria-live': 'polite', id: 'search-said' });
  const out = h('section', { id: 'search-results' });
  append(main, heading('Search'), form, said, out);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const q = new FormData(form).get('q');
    try {
      const { items } = await get('/v1/items:search', { q });
      said.textContent = items.length === 0 ? `Nothing found for “${q}”.`
        : `${items.length} found for “${q}”.`;
      replace(out, items.length === 0 ? h('p', {}, `Nothing found for “${q}”.`)
        : table(`${items.length} found for “${q}”, newest first`,
          ['Item', 'State', 'Queue', 'Dedupe key', 'Reason', 'Updated'],
          items.map((item) => [
            h('a', { href: `#/items/${item.id}`, id: `found-${item.id}` }, `Item ${item.id}`),
            h('span', { class: `badge ${item.state}` }, item.state),
            item.queue, h('code', {}, item.dedupeKey), item.lastError || '—',
            when(item.updatedAt)])));
    } catch (e) {
      said.textContent = '';
      replace(out, problem(e, 'The search was refused'));
    }
  });
}
