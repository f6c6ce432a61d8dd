// The console's shell: hash routes to views, the sign-in form when the admin API asks for
// credentials, who is signed in, and messages after an action.

import { api, AuthError, basic, bearer, credentials, forget, remember } from './api.js';
import { h } from './dom.js';
import { overview } from './overview.js';
import { flowDetail, flowList } from './flows.js';
import { queueDetail, queueList } from './queues.js';

const main = document.getElementById('main');
const who = document.getElementById('who');
const toastEl = document.getElementById('toast');

/** The view shown now: its `stop` ends its refreshing. */
let current = null;
let toastTimer = 0;

/** Say what an action did (or why it failed) where a screen reader announces it. */
export function toast(text, kind = 'ok') {
  toastEl.textContent = text;
  toastEl.className = `toast show ${kind}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    toastEl.className = 'toast';
  }, 6000);
}

const ROUTES = [
  { nav: 'overview', match: (p) => p.length === 0, view: () => overview },
  { nav: 'flows', match: (p) => p.length === 1 && p[0] === 'flows', view: () => flowList },
  { nav: 'flows', match: (p) => p.length === 2 && p[0] === 'flows', view: (p) => (ctx) => flowDetail(ctx, p[1]) },
  { nav: 'queues', match: (p) => p.length === 1 && p[0] === 'queues', view: () => queueList },
  { nav: 'queues', match: (p) => p.length === 2 && p[0] === 'queues', view: (p) => (ctx) => queueDetail(ctx, p[1]) },
];

function parts() {
  const raw = location.hash.replace(/^#\/?/, '').replace(/\/$/, '');
  if (!raw) return [];
  try {
    return raw.split('/').map(decodeURIComponent);
  } catch {
    return ['?'];
  }
}

function markNav(nav) {
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function showWho(server) {
  who.replaceChildren();
  if (!server) return;
  who.append(h('span', { class: 'role', title: 'Your role on this server' }, server.role));
  if (credentials()) {
    who.append(
      h('button', {
        type: 'button',
        class: 'link',
        onclick: () => {
          forget();
          route();
        },
      }, 'Sign out'),
    );
  }
}

/** Show what went wrong in place of the view. */
function failed(e) {
  if (e instanceof AuthError) {
    signIn();
    return;
  }
  main.replaceChildren(h('h1', {}, 'Something went wrong'), h('p', { class: 'error', role: 'alert' }, e.message));
}

/** Repeat `fn` every `ms` until the view changes; a sign-in request stops it. */
function every(ms, fn) {
  let timer = 0;
  let stopped = false;
  const tick = async () => {
    try {
      await fn();
    } catch (e) {
      if (e instanceof AuthError) {
        stopped = true;
        signIn();
        return;
      }
      toast(e.message, 'error');
    }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function signIn() {
  stopView();
  markNav(null);
  showWho(null);
  document.title = 'Sign in · Sluice';
  const error = h('p', { class: 'error', role: 'alert', id: 'signin-error' });
  const user = h('input', { id: 'signin-user', name: 'user', autocomplete: 'username' });
  const password = h('input', { id: 'signin-password', name: 'password', type: 'password', autocomplete: 'current-password' });
  const token = h('input', { id: 'signin-token', name: 'token', type: 'password', autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'signin', 'aria-labelledby': 'signin-title', novalidate: true },
    h('h1', { id: 'signin-title' }, 'Sign in'),
    h('p', {}, 'This server\u2019s admin API needs credentials: a user and password, or a token.'),
    h('div', { class: 'field' }, h('label', { for: 'signin-user' }, 'User'), user),
    h('div', { class: 'field' }, h('label', { for: 'signin-password' }, 'Password'), password),
    h('p', { class: 'or' }, 'or'),
    h('div', { class: 'field' }, h('label', { for: 'signin-token' }, 'Token'), token),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Sign in')),
    error,
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (token.value.trim()) remember(bearer(token.value));
    else if (user.value) remember(basic(user.value, password.value));
    else {
      error.textContent = 'Give a user and password, or a token.';
      user.focus();
      return;
    }
    try {
      await api('/api/v1/server');
    } catch (e) {
      forget();
      error.textContent = e instanceof AuthError ? 'These credentials were not accepted.' : e.message;
      password.value = '';
      token.value = '';
      return;
    }
    route();
  });
  main.replaceChildren(form);
  user.focus();
}

function stopView() {
  if (current) current();
  current = null;
}

async function route() {
  stopView();
  const p = parts();
  const r = ROUTES.find((x) => x.match(p));
  markNav(r ? r.nav : null);
  let server;
  try {
    server = await api('/api/v1/server');
  } catch (e) {
    failed(e);
    return;
  }
  showWho(server);
  if (!r) {
    main.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, 'There is no such page. ', h('a', { href: '#/' }, 'Go to the overview.')));
    return;
  }
  const stops = [];
  const ctx = {
    main,
    server,
    operator: server.role === 'operator' || server.role === 'admin',
    toast,
    every: (ms, fn) => stops.push(every(ms, fn)),
    title: (t) => {
      document.title = `${t} · Sluice`;
    },
  };
  current = () => stops.forEach((s) => s());
  const view = r.view(p);
  const mine = current;
  try {
    await view(ctx);
  } catch (e) {
    if (current === mine) failed(e);
    return;
  }
  // Focus the new content for keyboard and screen reader users, as a page load would.
  if (document.activeElement === document.body || !document.activeElement) main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', route);
route();
