// Queues: every queue with its depth and attributes, and one queue's page to browse its
// messages and, for operators, put, get and clear.

import { api, ApiError, seg } from './api.js';
import { bytes, count, duration, h, setText } from './dom.js';

const REFRESH_MS = 3000;

function age(ms) {
  return ms === null || ms === undefined ? '–' : duration(ms / 1000);
}

function flags(q) {
  const f = [];
  if (q.put_inhibited) f.push('put disabled');
  if (q.get_inhibited) f.push('get disabled');
  if (q.type === 'alias') f.push(`alias of ${q.target}`);
  if (q.type === 'model') f.push('model');
  return f.join(', ');
}

export async function queueList(ctx) {
  ctx.title('Queues');
  const tbody = h('tbody');
  const rows = new Map();
  const filter = h('input', { id: 'queue-filter', type: 'search', autocomplete: 'off' });
  const heading = h('p', { class: 'muted', id: 'qm-name' });
  ctx.main.replaceChildren(
    h('h1', {}, 'Queues'),
    heading,
    h('div', { class: 'toolbar' }, h('label', { for: 'queue-filter' }, 'Filter'), filter),
    h(
      'table',
      { class: 'grid', id: 'queues' },
      h('caption', { class: 'sr-only' }, 'Queues of the queue manager'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Queue'), h('th', { scope: 'col', class: 'num' }, 'Depth'), h('th', { scope: 'col', class: 'num' }, 'Max depth'), h('th', { scope: 'col', class: 'num' }, 'Bytes'), h('th', { scope: 'col', class: 'num' }, 'Oldest'), h('th', { scope: 'col' }, 'Notes'))),
      tbody,
    ),
  );
  const applyFilter = () => {
    const q = filter.value.trim().toLowerCase();
    for (const [name, row] of rows) row.tr.hidden = q !== '' && !name.toLowerCase().includes(q);
  };
  filter.addEventListener('input', applyFilter);
  const load = async () => {
    const all = await api('/api/v1/queues');
    setText(heading, `Queue manager ${all.queue_manager}; dead-letter queue ${all.dead_letter_queue || 'none'}.`);
    const seen = new Set();
    for (const q of all.queues) {
      seen.add(q.name);
      let row = rows.get(q.name);
      if (!row) {
        const cells = { depth: h('td', { class: 'num', 'data-col': 'depth' }), max: h('td', { class: 'num' }), bytes: h('td', { class: 'num' }), oldest: h('td', { class: 'num' }), notes: h('td') };
        const tr = h('tr', { 'data-queue': q.name }, h('th', { scope: 'row' }, h('a', { href: `#/queues/${encodeURIComponent(q.name)}` }, q.name)), cells.depth, cells.max, cells.bytes, cells.oldest, cells.notes);
        row = { tr, cells };
        rows.set(q.name, row);
      }
      setText(row.cells.depth, q.depth === undefined ? '–' : count(q.depth));
      row.cells.depth.classList.toggle('full', q.depth !== undefined && q.depth >= q.max_depth);
      setText(row.cells.max, count(q.max_depth));
      setText(row.cells.bytes, q.bytes === undefined ? '–' : bytes(q.bytes));
      setText(row.cells.oldest, age(q.oldest_age_ms));
      setText(row.cells.notes, flags(q));
      tbody.append(row.tr);
    }
    for (const [name, row] of rows) {
      if (!seen.has(name)) {
        row.tr.remove();
        rows.delete(name);
      }
    }
    applyFilter();
  };
  await load();
  ctx.every(REFRESH_MS, load);
}

function dl(pairs) {
  return h('dl', { class: 'pairs' }, ...pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v === '' || v === null || v === undefined ? '–' : String(v))]));
}

function putTime(d) {
  if (d.put_date.length !== 8 || d.put_time.length < 6) return '';
  const t = d.put_time;
  return `${d.put_date.slice(0, 4)}-${d.put_date.slice(4, 6)}-${d.put_date.slice(6, 8)} ${t.slice(0, 2)}:${t.slice(2, 4)}:${t.slice(4, 6)} UTC`;
}

/** One message: a summary line with the body's start; opening it shows the descriptor. */
function messageView(m, n) {
  const d = m.descriptor;
  const b = m.body;
  const preview = b.text !== undefined ? b.text : `hex ${b.hex}`;
  const short = preview.length > 120 ? `${preview.slice(0, 119)}…` : preview;
  return h(
    'details',
    { class: 'message' },
    h('summary', {}, h('span', { class: 'n' }, `${n}.`), ' ', h('span', { class: 'meta' }, [putTime(d), d.format || 'no format', bytes(b.length)].filter(Boolean).join(' · ')), ' ', h('code', { class: 'preview' }, short)),
    h(
      'div',
      { class: 'message-body' },
      h('h4', {}, 'Descriptor'),
      dl([
        ['Message id', d.msg_id],
        ['Correlation id', d.correl_id],
        ['Format', d.format],
        ['Persistence', d.persistence],
        ['Priority', d.priority],
        ['Expiry', d.expiry < 0 ? 'unlimited' : `${d.expiry / 10} s`],
        ['Reply to', d.reply_to_q ? `${d.reply_to_q}@${d.reply_to_qmgr}` : ''],
        ['Backout count', d.backout_count],
        ['CCSID / encoding', `${d.ccsid} / ${d.encoding}`],
        ['Put by', [d.user_identifier, d.put_appl_name].filter(Boolean).join(' · ')],
        ['Put at', putTime(d)],
      ]),
      m.properties.length ? h('h4', {}, 'Properties') : null,
      m.properties.length ? dl(m.properties.map((p) => [p.name, typeof p.value === 'object' ? JSON.stringify(p.value) : p.value])) : null,
      h('h4', {}, `Body (${bytes(b.length)}${b.truncated ? ', start shown' : ''})`),
      h('pre', { class: 'body' }, b.text !== undefined ? b.text : b.hex),
    ),
  );
}

export async function queueDetail(ctx, name) {
  ctx.title(name);
  const path = `/api/v1/queues/${seg(name)}`;
  const depth = h('dd', { id: 'queue-depth' });
  const attrs = h('div', { id: 'queue-attributes' });
  const list = h('div', { id: 'messages', class: 'messages', 'aria-live': 'polite' });
  const got = h('div', { id: 'got', 'aria-live': 'polite' });
  const browse = async () => {
    const r = await api(`${path}/messages?limit=50`);
    list.replaceChildren(
      r.messages.length ? h('p', { class: 'muted' }, r.messages.length < r.depth ? `The first ${r.messages.length} of ${count(r.depth)} messages.` : `${count(r.messages.length)} ${r.messages.length === 1 ? 'message' : 'messages'}.`) : h('p', { class: 'muted' }, 'The queue is empty.'),
      ...r.messages.map((m, i) => messageView(m, i + 1)),
    );
  };
  const refresh = async () => {
    const q = await api(path);
    setText(depth, q.depth === undefined ? '–' : count(q.depth));
    return q;
  };
  const act = async (what, fn) => {
    try {
      await fn();
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      ctx.toast(`${what}: ${e.message}`, 'error');
    }
    await refresh();
    await browse();
  };
  let operator = null;
  if (ctx.operator) {
    const body = h('textarea', { id: 'put-body', rows: 5, spellcheck: 'false' });
    const priority = h('input', { id: 'put-priority', type: 'number', min: 0, max: 9, value: 0, class: 'instances' });
    const persistent = h('input', { id: 'put-persistent', type: 'checkbox' });
    const put = h(
      'form',
      { class: 'put', 'aria-labelledby': 'put-title' },
      h('h3', { id: 'put-title' }, 'Put a message'),
      h('div', { class: 'field' }, h('label', { for: 'put-body' }, 'Message body (text, UTF-8)'), body),
      h('div', { class: 'row' }, h('div', { class: 'field' }, h('label', { for: 'put-priority' }, 'Priority'), priority), h('div', { class: 'field check' }, persistent, h('label', { for: 'put-persistent' }, 'Persistent'))),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Put')),
    );
    put.addEventListener('submit', (ev) => {
      ev.preventDefault();
      act('Put', async () => {
        const r = await api(`${path}/messages`, { method: 'POST', body: { body: body.value, priority: Number(priority.value) || 0, persistent: persistent.checked } });
        ctx.toast(`Put on ${name}; depth now ${count(r.depth)}.`);
        body.value = '';
      });
    });
    const getBtn = h('button', { type: 'button', id: 'get-first' }, 'Get first message');
    getBtn.addEventListener('click', () =>
      act('Get', async () => {
        const r = await api(`${path}/get`, { method: 'POST' });
        if (r.message) {
          got.replaceChildren(h('h3', {}, 'Message got (removed from the queue)'), messageView(r.message, 1));
          got.querySelector('details').open = true;
          ctx.toast(`Got a message from ${name}; depth now ${count(r.depth)}.`);
        } else {
          got.replaceChildren(h('p', { class: 'muted' }, 'No message: the queue is empty.'));
        }
      }),
    );
    // Asked again in the page rather than with a dialog, so the keyboard stays in place.
    const confirm = h('div', { class: 'confirm', hidden: true, role: 'group', 'aria-label': 'Confirm clearing' });
    const clearBtn = h('button', { type: 'button', id: 'clear', class: 'danger' }, 'Clear queue…');
    const yes = h('button', { type: 'button', id: 'clear-yes', class: 'danger' }, 'Remove every message');
    const no = h('button', { type: 'button' }, 'Cancel');
    confirm.append(h('span', {}, `Remove every message from ${name}? This cannot be undone. `), yes, no);
    clearBtn.addEventListener('click', () => {
      confirm.hidden = false;
      no.focus();
    });
    no.addEventListener('click', () => {
      confirm.hidden = true;
      clearBtn.focus();
    });
    yes.addEventListener('click', () =>
      act('Clear', async () => {
        const r = await api(`${path}/clear`, { method: 'POST' });
        confirm.hidden = true;
        clearBtn.focus();
        ctx.toast(`Cleared ${name}: ${count(r.cleared)} removed.`);
      }),
    );
    operator = h('section', { class: 'operator', 'aria-label': 'Operator actions' }, put, h('div', { class: 'actions' }, getBtn, clearBtn), confirm, got);
  }
  const refreshBtn = h('button', { type: 'button', id: 'browse' }, 'Refresh messages');
  refreshBtn.addEventListener('click', () => act('Browse', async () => {}));
  ctx.main.replaceChildren(
    h('p', { class: 'crumbs' }, h('a', { href: '#/queues' }, 'Queues'), ' / '),
    h('h1', {}, name),
    h('dl', { class: 'tiles small' }, h('div', { class: 'tile' }, h('dt', {}, 'Depth'), depth)),
    attrs,
    h('div', { class: 'columns' }, h('section', { 'aria-labelledby': 'messages-title' }, h('div', { class: 'section-head' }, h('h2', { id: 'messages-title' }, 'Messages'), refreshBtn), list), operator),
  );
  const q = await refresh();
  attrs.replaceChildren(
    h('details', { class: 'attributes' }, h('summary', {}, 'Attributes'),
      dl([
        ['Type', q.type === 'alias' ? `alias of ${q.target}` : q.type],
        ['Max depth', count(q.max_depth)],
        ['Max message length', bytes(q.max_msg_length)],
        ['Default persistence', q.default_persistence],
        ['Backout threshold', q.backout_threshold || 'none'],
        ['Backout queue', q.backout_queue],
        ['Put', q.put_inhibited ? 'disabled' : 'enabled'],
        ['Get', q.get_inhibited ? 'disabled' : 'enabled'],
      ])),
  );
  if (q.depth === undefined) {
    list.replaceChildren(h('p', { class: 'muted' }, `A ${q.type} queue holds no messages of its own.`));
    refreshBtn.hidden = true;
    if (operator) operator.hidden = true;
  } else {
    await browse();
  }
  ctx.every(REFRESH_MS, async () => {
    await refresh();
  });
}
