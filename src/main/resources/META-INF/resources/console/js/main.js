// The console's shell: sign-in, who is signed in, and a hash router that hands each screen the
// main element. Screens are modules of their own; each answers a function that stops its timers.

import { ApiError, call, session, whenUnauthorized } from './api.js';
import { append, h, heading, replace, sentence } from './dom.js';
import * as overview from './overview.js';
import * as failed from './failed.js';
import * as held from './held.js';
import * as item from './item.js';
import * as bulk from './bulk.js';
import * as queues from './queues.js';
import * as search from './search.js';

const $ = (id) => document.getElementById(id);
const main = $('main');

/**
 * The screens by their first path segment: #/failed?queue=emails is failed, with its query. A
 * Map, not a plain object: #/constructor or #/__proto__ must not find Object's own members.
 */
const screens = new Map(
  Object.entries({ '': overview, failed, held, items: item, bulk, queues, search }));

let me = null; // {name, roles, queues, operator}
let leave = null; // the current screen's clean-up
let shown = 0; // counts screens shown, so a screen still loading knows it was left

/** Says something to everyone, screen readers included, until the next message. */
export function say(text, kind = 'info') {
  const messages = $('messages');
  messages.className = `messages ${kind}`;
  replace(messages, text);
  // Above the screen: an action far down a long page would say its outcome out of sight. The
  // focus stays where it was (given back after the action, without scrolling); the next Tab
  // brings it back into view.
  if (text && messages.getBoundingClientRect().top < 0) messages.scrollIntoView({ block: 'nearest' });
}

/**
 * Where the hash points: the screen's name, its path segments decoded, and its query. rest is
 * null when the address names nothing, and why says why: a screen the console does not have
 * (#/nonsense); a segment that is not valid percent-encoding (#/items/%E0%A4), or one that is
 * '.' or '..' (#/items/..), which the browser would take as a step up the API's path
 * (/v1/items/.. asks for /v1/), not as a name; or an item with no id (#/items/), which would ask
 * for /v1/items/, the list, and show it as an item.
 */
function route() {
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?');
  const [name, ...segments] = path.split('/');
  let rest;
  let why = null;
  try {
    rest = segments.map(decodeURIComponent);
  } catch (e) {
    if (!(e instanceof URIError)) throw e;
    rest = null;
    why = 'is not correctly percent-encoded';
  }
  if (!screens.has(name)) {
    rest = null;
    why = 'starts with no screen the console has';
  } else if (rest && rest.some((segment) => segment === '.' || segment === '..')) {
    rest = null;
    why = "has '.' or '..' where a name goes, and no item or queue is named that";
  } else if (rest && name === 'items' && !rest[0]) {
    rest = null;
    why = 'has no id where the item\'s name goes';
  }
  return { name, rest, why, params: new URLSearchParams(query || '') };
}

/** The screen for an address that names nothing: it says so, and shows nothing of before. */
const nowhere = {
  render(main, { why }) {
    append(main, heading('No such page'), h('p', { class: 'problem', role: 'alert' },
      `The address ${location.hash} ${why}, so it names no item,`
      + ' queue or screen. Check the link, or start again from the Overview.'));
  },
};

async function show() {
  if (leave) leave();
  leave = null;
  if (!me) return;
  const where = route();
  const screen = where.rest === null ? nowhere : screens.get(where.name);
  for (const link of document.querySelectorAll('#nav a')) {
    const current = link.getAttribute('href') === `#/${where.name}`;
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  replace(main);
  const context = { me, ...where, say };
  const mine = ++shown;
  const cleanUp = await screen.render(main, context);
  if (mine !== shown) {
    // Left while it loaded: stop its timers, and let the newer screen have the focus.
    if (cleanUp) cleanUp();
    return;
  }
  leave = cleanUp || null;
  const title = main.querySelector('h1');
  // Tabs, history and a screen reader's "page loaded" say where the operator is.
  document.title = title ? `${title.textContent} – claimq console` : 'claimq console';
  title?.focus();
}

/** Who this key is: GET /v1/me, which any valid key may read. */
async function identify() {
  const { body } = await call('/v1/me');
  return { ...body, operator: body.roles.includes('operator') };
}

/** Shows the sign-in screen; the key is forgotten unless `keep` (no answer said it was wrong). */
function signedOut(reason, { keep = false } = {}) {
  if (leave) leave();
  leave = null;
  shown++;
  me = null;
  if (!keep) session.clear();
  replace(main);
  $('nav').hidden = true;
  $('who').hidden = true;
  $('read-only').hidden = true;
  $('sign-in').hidden = false;
  replace($('sign-in-reason'), reason || '');
  $('api-key').value = '';
  $('api-key').focus();
}

async function signIn() {
  try {
    me = await identify();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      signedOut('That key was refused (401): it is not one of this service\'s keys. Check it and'
        + ' try again.');
    } else {
      // Only a 401 says the key is wrong: a service that did not answer, or a 5xx, says nothing
      // of it, and the operator would have to find and paste it again.
      const status = e instanceof ApiError && e.status ? ` (${e.status})` : '';
      signedOut(`Could not sign in${status}: ${sentence(e.message)} The key is kept in this tab:`
        + ' reload the page to try it again.', { keep: true });
    }
    return;
  }
  $('sign-in').hidden = true;
  $('nav').hidden = false;
  $('who').hidden = false;
  replace($('who-name'), 'Signed in as ', h('bdi', {}, me.name), ` (${me.roles.join(', ')})`);
  $('read-only').hidden = me.operator;
  for (const link of document.querySelectorAll('[data-operator]')) {
    link.closest('li').hidden = !me.operator;
  }
  await show();
}

whenUnauthorized(() => signedOut('The service no longer accepts this key (401). Sign in again.'));

$('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = $('api-key').value;
  $('api-key').value = '';
  session.set(key);
  say('');
  signIn();
});

$('sign-out').addEventListener('click', () => signedOut('Signed out.'));
// The skip link moves the focus to the screen. Followed, its #main would be read as an address.
document.querySelector('.skip').addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});
window.addEventListener('hashchange', () => {
  say('');
  show();
});

if (session.key()) signIn();
else signedOut();
