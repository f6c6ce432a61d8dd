// Overview: the server at a glance, refreshed every few seconds.

import { api } from './api.js';
import { bytes, count, duration, h, Rate, rate, setText, stateBadge } from './dom.js';

const REFRESH_MS = 3000;

function tile(label, id, note) {
  return h(
    'div',
    { class: 'tile' },
    h('dt', {}, label),
    h('dd', { id, 'data-testid': id }, '–'),
    note ? h('dd', { class: 'note', id: `${id}-note` }) : null,
  );
}

export async function overview(ctx) {
  ctx.title('Overview');
  const rates = new Rate();
  const busy = h('tbody');
  ctx.main.replaceChildren(
    h('h1', {}, 'Overview'),
    h(
      'dl',
      { class: 'tiles', 'aria-label': 'Server' },
      tile('Messages/s', 'ov-rate'),
      tile('Messages', 'ov-messages'),
      tile('Errors', 'ov-errors'),
      tile('Flows running', 'ov-flows'),
      tile('Memory', 'ov-memory', true),
      tile('Uptime', 'ov-uptime'),
      tile('Version', 'ov-version', true),
    ),
    h('h2', {}, 'Busiest flows'),
    h(
      'table',
      { class: 'grid' },
      h('caption', { class: 'sr-only' }, 'The flows with the most messages per second'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Flow'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col', class: 'num' }, 'Messages/s'), h('th', { scope: 'col', class: 'num' }, 'Messages'), h('th', { scope: 'col', class: 'num' }, 'Errors'))),
      busy,
    ),
    h('p', { class: 'muted' }, `Refreshed every ${REFRESH_MS / 1000} seconds.`),
  );
  const $ = (id) => document.getElementById(id);
  const show = (server, flows) => {
    setText($('ov-version'), server.version);
    setText($('ov-version-note'), `queue manager ${server.queue_manager}`);
    setText($('ov-uptime'), duration(server.uptime_secs));
    setText($('ov-memory'), bytes(server.memory.rss_bytes));
    setText($('ov-memory-note'), `${bytes(server.memory.queue_bytes)} in queues`);
    setText($('ov-rate'), rate(rates.per('all', server.invocations)));
    setText($('ov-messages'), count(server.invocations));
    setText($('ov-errors'), count(server.errors));
    $('ov-errors').classList.toggle('bad', server.errors > 0);
    setText($('ov-flows'), `${server.flows_running} of ${server.flows}`);
    const rows = flows.map((f) => ({ f, r: rates.per(f.name, f.statistics.invocations) }));
    rows.sort((a, b) => (b.r || 0) - (a.r || 0) || b.f.statistics.invocations - a.f.statistics.invocations || a.f.name.localeCompare(b.f.name));
    // Rebuilt only while no link of it has the keyboard's focus, which a rebuild would lose.
    if (busy.contains(document.activeElement)) return;
    busy.replaceChildren(
      ...rows.slice(0, 8).map(({ f, r }) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, h('a', { href: `#/flows/${encodeURIComponent(f.name)}` }, f.name)),
          h('td', {}, stateBadge(f.state)),
          h('td', { class: 'num' }, rate(r)),
          h('td', { class: 'num' }, count(f.statistics.invocations)),
          h('td', { class: 'num' }, count(f.statistics.errors)),
        ),
      ),
    );
  };
  const load = async () => {
    const [server, flows] = await Promise.all([api('/api/v1/server'), api('/api/v1/flows')]);
    show(server, flows);
  };
  await load();
  ctx.every(REFRESH_MS, load);
}
