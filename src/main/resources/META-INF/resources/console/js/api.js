// The console's one door to claimq's public API: every call sends this tab's key, and every
// refusal becomes an ApiError carrying the problem+json the service answered.

const KEY = 'claimq.key';

/** The key lives in this tab's sessionStorage only: never a URL, a cookie or localStorage. */
export const session = {
  key: () => sessionStorage.getItem(KEY),
  set: (key) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }

  /** The field named first in the problem's errors, if any. */
  get field() {
    return this.problem.errors && this.problem.errors[0] ? this.problem.errors[0].field : null;
  }
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
 * shown exactly (payload numbers that a double would round). Query values that are undefined,
 * null or '' are left out; every other value is sent as given. `ifMatch`, when given, is sent as
 * the If-Match header: the ETag of the read a change was made from.
 */
export async function call(path, { method = 'GET', query, body, ifMatch } = {}) {
  const url = new URL(path.replace(/^\//, ''), root);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, value);
  }
  const headers = { Accept: 'application/json' };
  if (ifMatch) headers['If-Match'] = ifMatch;
  const key = session.key();
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
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
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { detail: text };
  }
  if (!response.ok) {
    const error = new ApiError(response.status, parsed || {});
    if (response.status === 401) onUnauthorized(error);
    throw error;
  }
  return { body: parsed, text, headers: response.headers };
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
