// Building the page from data without innerHTML: text is always set as text, so nothing an
// item, a reason or a payload holds can become markup. Nor can it reorder the page: every
// bidirectional control in a text is shown as a marked escape instead of being applied.

/**
 * h('a', {href: '#/', class: 'x', onclick: fn}, 'text', child): attributes by name, `on…` as
 * listeners, `hidden`/`disabled` as booleans; children are nodes, strings, or arrays of them.
 */
export function h(tag, props, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  add(element, children);
  return element;
}

/**
 * Adds children to an element as h() does: nodes, strings, or arrays of them, with undefined,
 * null and false left out. Screens use it, not Element.append, which writes null as "null".
 */
export function append(element, ...children) {
  add(element, children);
}

function add(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) add(element, child);
    else if (child instanceof Node) element.append(child);
    else element.append(...shown(String(child)));
  }
}

/**
 * The bidirectional controls: embeddings and overrides (U+202A-U+202E), isolates (U+2066-U+2069)
 * and marks (U+200E, U+200F, U+061C). Applied, one in data reorders what follows it: "a", U+202E,
 * "moc.live@ecila" reads as alice@evil.com.
 */
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** A text as its pieces: each bidi control a <mark> showing its escape (\u202E), never applied. */
function shown(text) {
  const pieces = [];
  let from = 0;
  for (const found of text.matchAll(BIDI)) {
    const code = found[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
    pieces.push(text.slice(from, found.index), h('mark', { class: 'control',
      title: `U+${code}, a bidirectional control, shown here instead of applied` }, `\\u${code}`));
    from = found.index + found[0].length;
  }
  pieces.push(text.slice(from));
  return pieces.filter((piece) => piece !== '');
}

/**
 * A piece of data among words of the page (a worker's name after "by"): isolated, so that its
 * characters, right-to-left ones included, cannot move the words around it.
 */
export function data(text) {
  return h('bdi', {}, text);
}

/**
 * Replaces a container's content, keeping keyboard focus on the element with the same id, so a
 * refresh every few seconds does not throw a keyboard user back to the top.
 */
export function replace(container, ...children) {
  const focused = document.activeElement && container.contains(document.activeElement)
    ? document.activeElement.id : null;
  container.replaceChildren();
  add(container, children);
  if (focused) document.getElementById(focused)?.focus();
}

/**
 * As replace, but only what changed is replaced: a refreshed table keeps its rows and cells where
 * they say the same, so a screen reader keeps its place in it, and an alert that says the same
 * again is not read again.
 */
export function update(container, ...children) {
  const fresh = document.createElement(container.tagName);
  add(fresh, children);
  const focused = document.activeElement && container.contains(document.activeElement)
    ? document.activeElement.id : null;
  morph(container, [...fresh.childNodes]);
  if (focused && !container.contains(document.activeElement)) {
    document.getElementById(focused)?.focus();
  }
}

function morph(container, fresh) {
  const shown = [...container.childNodes];
  if (shown.length !== fresh.length) {
    container.replaceChildren(...fresh);
    return;
  }
  fresh.forEach((node, i) => {
    const old = shown[i];
    if (old.isEqualNode(node)) return;
    if (old.nodeType === Node.ELEMENT_NODE && old.tagName === node.tagName
      && sameAttributes(old, node)) {
      morph(old, [...node.childNodes]);
    } else {
      old.replaceWith(node);
    }
  });
}

function sameAttributes(a, b) {
  return a.attributes.length === b.attributes.length
    && [...a.attributes].every((attribute) => b.getAttribute(attribute.name) === attribute.value);
}

/** A screen's heading, focused on arrival so that screen readers and Tab start there. */
export function heading(text) {
  return h('h1', { tabindex: '-1', class: 'screen-title' }, text);
}

/** "3 s", "4 min", "2 h", "5 d": a number of seconds, for a glance. */
export function seconds(value) {
  if (value === null || value === undefined) return '—';
  const s = Math.max(0, Math.round(value));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

/**
 * A <time> showing the age, with the exact instant for the pointer and for assistive tech. An
 * instant that may lie ahead (a due time) says so ("in 2 h"); any other is past, and a clock a
 * little ahead of this browser's still makes it "0 s ago".
 */
export function when(iso, { ahead = false } = {}) {
  if (!iso) return '—';
  const since = (Date.now() - Date.parse(iso)) / 1000;
  return h('time', { datetime: iso, title: iso },
    ahead && since < 0 ? `in ${seconds(-since)}` : `${seconds(since)} ago`);
}

const running = new WeakSet(); // the sections whose action is in flight

/**
 * A listener that runs an action one at a time. While it runs, the buttons and radio buttons of
 * the section it belongs to (or of `scope`) are disabled: a double-click or a second Enter sends
 * nothing more, and the choice of what to do (bulk's action) cannot change under the request.
 * The second click of a double-click (detail 2) is not a decision of its own either, even when a
 * control shown in the first one's place (a confirmation, the other half of a toggle) gets it.
 */
export function acting(action, scope = 'section') {
  return async (event) => {
    if (event.type === 'submit') event.preventDefault();
    if (event.detail > 1) return;
    const root = event.currentTarget.closest(scope) || event.currentTarget;
    if (running.has(root)) return;
    running.add(root);
    const buttons = [...root.querySelectorAll(
      'button:not([disabled]), input[type=radio]:not([disabled])')];
    const focused = document.activeElement;
    for (const button of buttons) button.disabled = true;
    try {
      await action(event);
    } finally {
      running.delete(root);
      for (const button of buttons) button.disabled = false;
      // A disabled button loses the focus; give it back if nothing else took it meanwhile.
      // Without scrolling: the page stays where the action's outcome was shown (say).
      if (focused?.isConnected && document.activeElement === document.body) {
        focused.focus({ preventScroll: true });
      }
    }
  };
}

/**
 * The start of what the page says when no answer tells what became of an action (a network
 * error or a 5xx): "Retry: outcome unknown (503). Service Unavailable."
 */
export function unknown(label, error) {
  const status = error.status ? ` (${error.status})` : '';
  return `${label}: outcome unknown${status}. ${sentence(error.message)}`;
}

export const sentence = (text) => (/[.!?]$/.test(text) ? text : `${text}.`);

/** A screen's problem message, in place of what could not be loaded. */
export function problem(error, what) {
  const status = error.status ? ` (${error.status})` : '';
  return h('p', { class: 'problem', role: 'alert' }, `${what}: ${error.message}${status}`);
}

/** The place beside a form's field where the API's refusal of it is shown (markField). */
export function fieldProblem(id) {
  return h('p', { class: 'field-problem', id: `${id}-problem`, hidden: true });
}

/**
 * Shows a refusal beside the field of the form that the API names (error.field, the control's
 * name), marks that field invalid and focuses it; an earlier refusal's marks go. Answers whether
 * a field was marked.
 */
export function markField(form, error) {
  for (const slot of form.querySelectorAll('.field-problem')) slot.hidden = true;
  for (const marked of form.querySelectorAll('[aria-invalid]')) {
    marked.removeAttribute('aria-invalid');
    describedBy(marked, `${marked.id}-problem`, false);
  }
  const control = error.field ? form.elements.namedItem(error.field) : null;
  const slot = control && document.getElementById(`${control.id}-problem`);
  if (!slot) return false;
  replace(slot, error.fieldMessage);
  slot.hidden = false;
  control.setAttribute('aria-invalid', 'true');
  // So that the field, focused, is read with why it was refused, not only "invalid entry".
  describedBy(control, slot.id, true);
  control.focus();
  return true;
}

/** Adds an id to a control's aria-describedby, or takes it out, keeping the others (a hint). */
function describedBy(control, id, on) {
  const ids = (control.getAttribute('aria-describedby') || '').split(' ')
    .filter((each) => each && each !== id);
  if (on) ids.push(id);
  if (ids.length) control.setAttribute('aria-describedby', ids.join(' '));
  else control.removeAttribute('aria-describedby');
}

/** A small table whose cells carry their column's name, for the one-column layout on phones. */
export function table(caption, columns, rows) {
  return h('div', { class: 'table' },
    h('table', {},
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows.map((cells) => h('tr', {},
        cells.map((cell, i) => h('td', { 'data-label': columns[i] }, cell)))))));
}
