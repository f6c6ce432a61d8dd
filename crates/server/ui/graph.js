// A flow drawn as SVG: nodes in layers from the input nodes rightwards, each with its input
// terminals on the left and output terminals on the right, wires as curves between them.

import { count, s, setText } from './dom.js';

const W = 200;
const HEAD = 42;
const ROW = 16;
const FOOT = 22;
const GAP_X = 90;
const GAP_Y = 28;
const PAD = 16;
const MAX_LABEL = 24;

function cut(text) {
  return text.length > MAX_LABEL ? `${text.slice(0, MAX_LABEL - 1)}…` : text;
}

/** Layer of each node: the longest path from a node no wire reaches. Nodes on a loop go after. */
function layers(nodes, wires) {
  const idx = new Map(nodes.map((n, i) => [n.label, i]));
  const succ = nodes.map(() => []);
  const indeg = nodes.map(() => 0);
  for (const w of wires) {
    const a = idx.get(w.from);
    const b = idx.get(w.to);
    if (a === undefined || b === undefined || a === b) continue;
    succ[a].push(b);
    indeg[b]++;
  }
  const layer = nodes.map(() => 0);
  const queue = nodes.map((_, i) => i).filter((i) => indeg[i] === 0);
  const done = nodes.map(() => false);
  while (queue.length) {
    const a = queue.shift();
    done[a] = true;
    for (const b of succ[a]) {
      layer[b] = Math.max(layer[b], layer[a] + 1);
      if (--indeg[b] === 0) queue.push(b);
    }
  }
  const deepest = Math.max(0, ...layer);
  nodes.forEach((_, i) => {
    if (!done[i]) layer[i] = deepest + 1;
  });
  return { layer, idx };
}

/** Place the nodes: columns by layer, each column ordered by where its nodes' sources are. */
function place(g) {
  const { layer, idx } = layers(g.nodes, g.wires);
  const cols = [];
  g.nodes.forEach((n, i) => {
    (cols[layer[i]] ||= []).push(i);
  });
  const height = (n) => HEAD + ROW * Math.max(n.inputs.length, n.outputs.length, 1) + FOOT;
  const pos = new Map();
  const preds = g.nodes.map(() => []);
  for (const w of g.wires) {
    const a = idx.get(w.from);
    const b = idx.get(w.to);
    if (a !== undefined && b !== undefined) preds[b].push(a);
  }
  let width = 0;
  let total = 0;
  cols.forEach((col, c) => {
    if (!col) return;
    if (c > 0) {
      const key = (i) => {
        const ys = preds[i].filter((p) => pos.has(p)).map((p) => pos.get(p).y);
        return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : Infinity;
      };
      col.sort((a, b) => key(a) - key(b) || a - b);
    }
    let y = PAD;
    for (const i of col) {
      const h = height(g.nodes[i]);
      pos.set(i, { x: PAD + c * (W + GAP_X), y, h });
      y += h + GAP_Y;
    }
    width = Math.max(width, PAD + c * (W + GAP_X) + W + PAD);
    total = Math.max(total, y - GAP_Y + PAD);
  });
  return { pos, idx, width, height: total };
}

function terminalY(p, i) {
  return p.y + HEAD + ROW * i + ROW / 2;
}

function wireClass(terminal) {
  if (terminal === 'failure' || terminal === 'catch' || terminal === 'timeout') return `wire wire-${terminal}`;
  return 'wire';
}

/** Draw `g` (the admin API's graph); `update` refreshes the per-node counts. */
export function drawGraph(g, title) {
  const { pos, idx, width, height } = place(g);
  const svg = s('svg', {
    class: 'flow-graph',
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'img',
    'aria-label': `${title}: ${g.nodes.length} nodes and ${g.wires.length} wires; the table of nodes below lists the same.`,
  });
  svg.append(
    s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }))),
  );
  const wires = s('g', { class: 'wires' });
  for (const w of g.wires) {
    const a = idx.get(w.from);
    const b = idx.get(w.to);
    if (a === undefined || b === undefined) continue;
    const from = g.nodes[a];
    const to = g.nodes[b];
    const pa = pos.get(a);
    const pb = pos.get(b);
    const x1 = pa.x + W;
    const y1 = terminalY(pa, Math.max(0, from.outputs.indexOf(w.terminal)));
    const x2 = pb.x;
    const y2 = terminalY(pb, Math.max(0, to.inputs.indexOf(w.input)));
    const dx = Math.max(40, Math.abs(x2 - x1) / 2);
    wires.append(
      s('path', { class: wireClass(w.terminal), d: `M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`, 'marker-end': 'url(#arrow)', 'data-from': w.from, 'data-to': w.to }, s('title', {}, `${w.from}.${w.terminal} → ${w.to}.${w.input}`)),
    );
  }
  svg.append(wires);
  const counts = new Map();
  g.nodes.forEach((n, i) => {
    const p = pos.get(i);
    const node = s('g', { class: 'node', 'data-label': n.label, transform: `translate(${p.x},${p.y})` }, s('title', {}, `${n.label} (${n.type})`));
    node.append(
      s('rect', { class: 'box', width: W, height: p.h, rx: 6 }),
      s('rect', { class: 'head', width: W, height: HEAD - 6, rx: 6 }),
      s('text', { class: 'label', x: 10, y: 17 }, cut(n.label)),
      s('text', { class: 'type', x: 10, y: 31 }, cut(n.type)),
    );
    n.inputs.forEach((t, k) => {
      const y = HEAD + ROW * k + ROW / 2;
      node.append(s('circle', { class: 'terminal', cx: 0, cy: y, r: 4 }), s('text', { class: 'term', x: 8, y: y + 4 }, t));
    });
    n.outputs.forEach((t, k) => {
      const y = HEAD + ROW * k + ROW / 2;
      const wired = g.wires.some((w) => w.from === n.label && w.terminal === t);
      node.append(
        s('circle', { class: wired ? 'terminal wired' : 'terminal', cx: W, cy: y, r: 4 }),
        s('text', { class: 'term', x: W - 8, y: y + 4, 'text-anchor': 'end' }, t),
      );
    });
    const c = s('text', { class: 'count', x: 10, y: p.h - 7 });
    node.append(c);
    counts.set(n.label, c);
    svg.append(node);
  });
  return {
    svg,
    update(fresh) {
      for (const n of fresh.nodes) {
        const c = counts.get(n.label);
        if (!c) continue;
        const e = n.statistics.errors;
        setText(c, `${count(n.statistics.invocations)} msgs${e ? ` · ${count(e)} errors` : ''}`);
        c.classList.toggle('bad', e > 0);
      }
    },
  };
}
