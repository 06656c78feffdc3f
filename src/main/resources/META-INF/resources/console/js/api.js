// The console's one door to claimq's public API: every call sends this tab's key, and every
// refusal becomes an ApiError carrying the problem+json the service answered.

import { stringify } from './json.js';

const KEY = 'claimq.key';

/** The key lives in this tab's sessionStorage only: never a URL, a cookie or localStorage. */
export const session = {
  key: () => sessionStorage.getItem(KEY),
  set: (key) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  /** typed: the numbers the request sent as typed, and where (json.js's stringify). */
  constructor(status, problem, typed = []) {
    const at = notJsonAt(status, problem, typed);
    const detail = problem.detail || problem.title || `HTTP ${status}`;
    super(at ? `${detail} That is ${at.field}, sent as typed, ${at.text}: ${notJson(at)}.` : detail);
    this.status = status;
    this.problem = problem;
    this.typed = typed;
    this.at = at;
  }

  /**
   * The field named first in the problem's errors; or, for a body the service could not parse,
   * the typed number where it stopped (the service names no field then, only a column).
   */
  get field() {
    if (this.problem.errors && this.problem.errors[0]) return this.problem.errors[0].field;
    return this.at ? this.at.field : null;
  }

  /** What is wrong with that field, with what was sent when it was a typed number. */
  get fieldMessage() {
    const field = this.field;
    if (!field) return null;
    const typed = this.typed.find((t) => t.field === field);
    if (this.at && this.at.field === field) return `${notJson(this.at)} (sent as typed: ${typed.text})`;
    const message = this.problem.errors[0].message || this.message;
    return typed ? `${message} (sent as typed: ${typed.text})` : message;
  }
}

/**
 * The typed number in which a 400 "The body is not valid JSON (line 1, column 17)" stopped, if
 * it stopped in one. The body is one line; the column counts UTF-8 bytes from 1.
 */
function notJsonAt(status, problem, typed) {
  const where = status === 400 && !problem.errors
    && /not valid JSON \(line 1, column (\d+)\)/.exec(problem.detail || '');
  if (!where) return null;
  const i = Number(where[1]) - 1;
  return typed.find((t) => t.from <= i && i <= t.to) || null;
}

/** Why typed digits are not a JSON number: the only way they are not is a leading zero. */
function notJson(at) {
  return /^-?0\d/.test(at.text)
    ? 'a JSON number does not start with 0 unless it is 0, so the service refused it'
    : 'the service could not read it as a JSON number';
}

// The API is at the service's root: one level up from /console/.
const root = new URL('../', document.baseURI);

/** Called with every 401, so that a revoked or mistyped key ends at the sign-in screen. */
let onUnauthorized = () => {};
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

/**
 * Calls the API and answers {body, text, headers}. `text` is the body as sent, for what must be
 * shown exactly (payload numbers that a double would round). A request body's Typed numbers are
 * sent as their digits (json.js). Query values that are undefined, null or '' are left out; every
 * other value is sent as given. `ifMatch`, when given, is sent as the If-Match header: the ETag of
 * the read a change was made from. A proxy that compresses answers marks that tag weak (W/"7"),
 * which If-Match never matches; claimq's tags are versions, so the tag goes back strong.
 */
export async function call(path, { method = 'GET', query, body, ifMatch } = {}) {
  const url = new URL(path.replace(/^\//, ''), root);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, value);
  }
  const headers = { Accept: 'application/json' };
  if (ifMatch) headers['If-Match'] = ifMatch.replace(/^W\//, '');
  const key = session.key();
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const sent = body === undefined ? undefined : stringify(body);
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: sent?.text,
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch (e) {
    throw new ApiError(0, { title: 'No answer', detail: `claimq did not answer (${e.message}).` });
  }
  let text;
  try {
    text = await response.text();
  } catch (e) {
    throw new ApiError(0, { title: 'No answer', detail: `claimq's answer was cut off (${e.message}).` });
  }
  if (!response.ok) {
    const error = new ApiError(response.status, problemIn(response, text), sent?.typed);
    if (response.status === 401) onUnauthorized(error);
    throw error;
  }
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { detail: text };
  }
  return { body: parsed, text, headers: response.headers };
}

/**
 * What a refusal says: the service's problem+json; any other answer, such as a proxy's HTML error
 * page, is said by its reason phrase ("Bad Gateway"), as its body is not written to be read here.
 * HTTP/2 sends no reason phrase: then it is a short text of its own.
 */
function problemIn(response, text) {
  const type = (response.headers.get('Content-Type') || '').split(';')[0].trim().toLowerCase();
  if (type === 'application/problem+json') {
    try {
      const problem = JSON.parse(text);
      if (problem && typeof problem === 'object') return problem;
    } catch {
      // not the problem it says it is: said by its status, as below
    }
  }
  return { title: response.statusText || 'No reason given' };
}

/**
 * True when nothing says what became of a request: no answer came (status 0) or a 5xx did, which
 * a proxy or a failing service sends whether or not the action took effect.
 */
export function outcomeUnknown(error) {
  return error instanceof ApiError && (error.status === 0 || error.status >= 500);
}

/** The body only, for the many calls that need nothing else. */
export async function get(path, query) {
  return (await call(path, { query })).body;
}

export async function post(path, body, query) {
  return (await call(path, { method: 'POST', body, query })).body;
}
