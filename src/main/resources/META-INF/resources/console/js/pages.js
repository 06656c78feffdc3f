// A listing paged with the API's keyset cursor, as far as it goes: each page is added below the
// last, and a button asks for the next one. The failed, held and queues screens share it.

import { get } from './api.js';
import { acting, h, problem, replace } from './dom.js';

const PAGE = 50;

/**
 * Lists GET /v1/items (or another listing's path, whose entries are in answer[field]) with the
 * query into rows (one row(entry) each), says how many are shown in status (describe(shown,
 * more)), and puts the next-page button, or a refusal, in more.
 */
export async function pageThrough({
  path = '/v1/items', field = 'items', query = {}, rows, row, status, more, describe, refused,
  moreId,
}) {
  let shown = 0;
  /** asked: from the button, whose focus must not fall to the top of the page when it goes. */
  async function page(cursor, asked = false) {
    let answer;
    try {
      answer = await get(path, { ...query, limit: PAGE, cursor });
    } catch (e) {
      replace(more, problem(e, refused));
      return;
    }
    const added = answer[field].map(row);
    rows.append(...added);
    shown += answer[field].length;
    status.textContent = describe(shown, Boolean(answer.nextCursor));
    replace(more, answer.nextCursor
      // acting: a double-click or a second Enter asks for the next page once, not twice.
      ? h('button', { type: 'button', id: moreId, onclick: acting(() => page(answer.nextCursor, true)) },
        `Load ${PAGE} more`)
      : null);
    if (asked) {
      // The next page's button, or on the last page the first of the rows it added.
      (more.querySelector('button') || added[0]?.querySelector('a, button'))?.focus();
    }
  }
  await page(undefined);
}
