// The admin API as the page calls it: credentials from sessionStorage, JSON in and out, and
// errors a view can tell apart (sign in again, or show the server's message).

const KEY = 'sluice.authorization';

/** The admin API answered 401: the page shows its sign-in form. */
export class AuthError extends Error {}

/** Any other failure, with the server's own message when it sent one. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function credentials() {
  return sessionStorage.getItem(KEY);
}

export function remember(authorization) {
  sessionStorage.setItem(KEY, authorization);
}

export function forget() {
  sessionStorage.removeItem(KEY);
}

/** An Authorization value for HTTP basic, with the user and password as UTF-8. */
export function basic(user, password) {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return `Basic ${btoa(s)}`;
}

export function bearer(token) {
  return `Bearer ${token.trim()}`;
}

/** Call the admin API; `body` is sent as JSON. */
export async function api(path, { method = 'GET', body } = {}) {
  // Tells the server not to ask for basic credentials itself: the browser's own dialog would
  // hide the page's form, which also takes a token.
  const headers = { Accept: 'application/json', 'X-Requested-With': 'sluice-ui' };
  const auth = credentials();
  if (auth) headers.Authorization = auth;
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  let r;
  try {
    r = await fetch(path, { method, headers, body: payload, cache: 'no-store', credentials: 'omit' });
  } catch (e) {
    throw new ApiError(0, `The server did not answer (${e.message}).`);
  }
  if (r.status === 401) throw new AuthError('This server needs credentials.');
  const text = await r.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!r.ok) throw new ApiError(r.status, (data && data.error) || `${r.status} ${r.statusText}`);
  return data;
}

/** A path segment for a name (queue names may hold `/`). */
export function seg(name) {
  return encodeURIComponent(name);
}
