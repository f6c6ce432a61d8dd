// Flows: every deployed flow with its state and figures, the operator's controls, and one
// flow's page with its graph.

import { api, ApiError, seg } from './api.js';
import { count, h, micros, Rate, rate, setText, stateBadge } from './dom.js';
import { drawGraph } from './graph.js';

const REFRESH_MS = 3000;

/** Stop, start, restart and instances for one flow; `after` reloads the view. */
function controls(ctx, name, after, visibleLabel = false) {
  const act = async (verb, method = 'POST', body) => {
    try {
      await api(`/api/v1/flows/${seg(name)}/${verb}`, { method, body });
      ctx.toast(verb === 'instances' ? `${name}: now ${body.instances} instances` : `${name}: ${verb === 'stop' ? 'stopped' : verb === 'start' ? 'started' : 'restarted'}`);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      ctx.toast(`${name}: ${e.message}`, 'error');
    }
    await after();
  };
  const stop = h('button', { type: 'button', 'aria-label': `Stop ${name}`, onclick: () => act('stop') }, 'Stop');
  const start = h('button', { type: 'button', 'aria-label': `Start ${name}`, onclick: () => act('start') }, 'Start');
  const restart = h('button', { type: 'button', 'aria-label': `Restart ${name}`, onclick: () => act('restart') }, 'Restart');
  const id = `instances-${name}`;
  const input = h('input', { id, type: 'number', min: 1, max: 1024, class: 'instances', inputmode: 'numeric' });
  const form = h(
    'form',
    { class: 'inline' },
    visibleLabel ? h('label', { for: id }, 'Instances') : h('label', { for: id, class: 'sr-only' }, `Instances of ${name}`),
    input,
    h('button', { type: 'submit', 'aria-label': `Set instances of ${name}` }, 'Set'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const n = Number(input.value);
    if (!Number.isInteger(n) || n < 1 || n > 1024) {
      ctx.toast('Instances must be a whole number from 1 to 1024.', 'error');
      input.focus();
      return;
    }
    act('instances', 'PUT', { instances: n });
  });
  const el = h('div', { class: 'controls' }, stop, start, restart, form);
  return {
    el,
    update(flow) {
      stop.hidden = flow.state !== 'running';
      start.hidden = flow.state === 'running';
      restart.disabled = flow.state !== 'running';
      // Not while someone is typing in it.
      if (document.activeElement !== input) input.value = flow.instances;
    },
  };
}

/** One flow's figures, as the list and the flow's page show them. */
function figures(f, r) {
  const s = f.statistics;
  return {
    rate: rate(r),
    messages: count(s.invocations),
    errors: count(s.errors),
    avg: micros(s.avg_elapsed_us),
    max: micros(s.max_elapsed_us),
    cpu: micros(s.avg_cpu_us),
  };
}

const COLUMNS = [
  ['rate', 'Messages/s'],
  ['messages', 'Messages'],
  ['errors', 'Errors'],
  ['avg', 'Avg elapsed'],
  ['max', 'Max elapsed'],
  ['cpu', 'CPU/message'],
];

export async function flowList(ctx) {
  ctx.title('Flows');
  const rates = new Rate();
  const tbody = h('tbody');
  const rows = new Map();
  const filter = h('input', { id: 'flow-filter', type: 'search', autocomplete: 'off' });
  ctx.main.replaceChildren(
    h('h1', {}, 'Flows'),
    h('div', { class: 'toolbar' }, h('label', { for: 'flow-filter' }, 'Filter'), filter),
    h(
      'table',
      { class: 'grid', id: 'flows' },
      h('caption', { class: 'sr-only' }, 'Deployed flows'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Flow'),
          h('th', { scope: 'col' }, 'State'),
          h('th', { scope: 'col', class: 'num' }, 'Instances'),
          ...COLUMNS.map(([, t]) => h('th', { scope: 'col', class: 'num' }, t)),
          ctx.operator ? h('th', { scope: 'col' }, 'Actions') : null,
        ),
      ),
      tbody,
    ),
  );
  const applyFilter = () => {
    const q = filter.value.trim().toLowerCase();
    for (const [name, row] of rows) row.tr.hidden = q !== '' && !name.toLowerCase().includes(q);
  };
  filter.addEventListener('input', applyFilter);
  const load = async () => {
    const flows = await api('/api/v1/flows');
    flows.sort((a, b) => a.name.localeCompare(b.name));
    const seen = new Set();
    for (const f of flows) {
      seen.add(f.name);
      let row = rows.get(f.name);
      if (!row) {
        const cells = Object.fromEntries(COLUMNS.map(([k]) => [k, h('td', { class: 'num' })]));
        const state = h('td', { class: 'state' });
        const instances = h('td', { class: 'num' });
        const ctl = ctx.operator ? controls(ctx, f.name, load) : null;
        const tr = h(
          'tr',
          { 'data-flow': f.name },
          h('th', { scope: 'row' }, h('a', { href: `#/flows/${encodeURIComponent(f.name)}` }, f.name)),
          state,
          instances,
          ...COLUMNS.map(([k]) => cells[k]),
          ctl ? h('td', {}, ctl.el) : null,
        );
        row = { tr, cells, state, instances, ctl, shown: null };
        rows.set(f.name, row);
      }
      if (row.shown !== f.state) {
        row.state.replaceChildren(stateBadge(f.state));
        row.shown = f.state;
      }
      setText(row.instances, f.instances);
      const fig = figures(f, rates.per(f.name, f.statistics.invocations));
      for (const [k] of COLUMNS) setText(row.cells[k], fig[k]);
      if (row.ctl) row.ctl.update(f);
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

export async function flowDetail(ctx, name) {
  ctx.title(name);
  const rates = new Rate();
  const state = h('span', { id: 'flow-state' });
  const figs = Object.fromEntries(COLUMNS.map(([k]) => [k, h('dd', { id: `flow-${k}` })]));
  const graphBox = h('div', { class: 'graph', id: 'graph' });
  const nodeRows = h('tbody');
  const ctl = ctx.operator ? controls(ctx, name, () => load(), true) : null;
  ctx.main.replaceChildren(
    h('p', { class: 'crumbs' }, h('a', { href: '#/flows' }, 'Flows'), ' / '),
    h('h1', {}, name, ' ', state),
    ctl ? h('div', { class: 'bar' }, ctl.el) : null,
    h('dl', { class: 'tiles small' }, ...COLUMNS.map(([k, t]) => h('div', { class: 'tile' }, h('dt', {}, t), figs[k]))),
    h('h2', { id: 'graph-title' }, 'Graph'),
    graphBox,
    h('h2', {}, 'Nodes'),
    h(
      'table',
      { class: 'grid', id: 'nodes' },
      h('caption', { class: 'sr-only' }, `The nodes of ${name}`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Node'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col', class: 'num' }, 'Invocations'), h('th', { scope: 'col', class: 'num' }, 'Errors'), h('th', { scope: 'col', class: 'num' }, 'Avg elapsed'), h('th', { scope: 'col', class: 'num' }, 'CPU/invocation'), h('th', { scope: 'col' }, 'Wired to'))),
      nodeRows,
    ),
  );
  let graph = null;
  const load = async () => {
    const [flow, g] = await Promise.all([api(`/api/v1/flows/${seg(name)}`), api(`/api/v1/flows/${seg(name)}/graph`)]);
    state.replaceChildren(stateBadge(flow.state));
    const fig = figures(flow, rates.per(name, flow.statistics.invocations));
    for (const [k] of COLUMNS) setText(figs[k], fig[k]);
    if (ctl) ctl.update(flow);
    // Redrawn when the flow was redeployed with other nodes or wires; else only the counts.
    const shape = JSON.stringify([g.nodes.map((n) => [n.label, n.type, n.outputs]), g.wires]);
    if (!graph || graph.shape !== shape) {
      graph = drawGraph(g, `The graph of ${name}`);
      graph.shape = shape;
      graphBox.replaceChildren(graph.svg);
      nodeRows.replaceChildren(
        ...g.nodes.map((n) => {
          const out = g.wires.filter((w) => w.from === n.label).map((w) => `${w.terminal} → ${w.to}`);
          return h(
            'tr',
            { 'data-node': n.label },
            h('th', { scope: 'row' }, n.label),
            h('td', {}, n.type),
            h('td', { class: 'num', 'data-stat': 'invocations' }),
            h('td', { class: 'num', 'data-stat': 'errors' }),
            h('td', { class: 'num', 'data-stat': 'avg' }),
            h('td', { class: 'num', 'data-stat': 'cpu' }),
            h('td', {}, out.join(', ') || '–'),
          );
        }),
      );
    }
    graph.update(g);
    for (const n of g.nodes) {
      const tr = nodeRows.querySelector(`tr[data-node="${CSS.escape(n.label)}"]`);
      if (!tr) continue;
      setText(tr.querySelector('[data-stat="invocations"]'), count(n.statistics.invocations));
      setText(tr.querySelector('[data-stat="errors"]'), count(n.statistics.errors));
      setText(tr.querySelector('[data-stat="avg"]'), micros(n.statistics.avg_elapsed_us));
      setText(tr.querySelector('[data-stat="cpu"]'), micros(n.statistics.avg_cpu_us));
    }
  };
  await load();
  ctx.every(REFRESH_MS, load);
}
