// Building the page without a framework: elements from tag, attributes and children, and the
// formats numbers are shown in.

const SVG_NS = 'http://www.w3.org/2000/svg';

function fill(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') el.textContent = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.setAttribute('class', v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** An HTML element: h('a', { href: '#/' }, 'Home'). */
export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** Set an element's text only when it changed (keeps selections and screen readers calm). */
export function setText(el, text) {
  const t = String(text);
  if (el.textContent !== t) el.textContent = t;
}

const int = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });
const dec = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });

export function count(n) {
  return n === undefined || n === null ? '–' : int.format(n);
}

export function rate(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '–';
  return n >= 100 ? int.format(n) : dec.format(n);
}

export function micros(us) {
  if (!us) return '–';
  if (us >= 1e6) return `${dec.format(us / 1e6)} s`;
  if (us >= 1e3) return `${dec.format(us / 1e3)} ms`;
  return `${dec.format(us)} µs`;
}

export function bytes(n) {
  if (n === undefined || n === null) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? int.format(n) : dec.format(n)} ${units[i]}`;
}

export function duration(secs) {
  if (secs === undefined || secs === null) return '–';
  const d = Math.floor(secs / 86400);
  const hr = Math.floor((secs % 86400) / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const sec = Math.floor(secs % 60);
  if (d) return `${d} d ${hr} h`;
  if (hr) return `${hr} h ${m} min`;
  if (m) return `${m} min ${sec} s`;
  return `${sec} s`;
}

/** Messages per second between two readings of a counter, or null before the second. */
export class Rate {
  constructor() {
    this.last = new Map();
  }

  per(key, total) {
    const now = performance.now();
    const prev = this.last.get(key);
    this.last.set(key, { total, now });
    if (!prev || now <= prev.now || total < prev.total) return null;
    return ((total - prev.total) * 1000) / (now - prev.now);
  }
}

/** A badge for a flow's state. */
export function stateBadge(state) {
  return h('span', { class: `badge state-${state}`, text: state });
}
