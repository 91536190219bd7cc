// Charts drawn as inline SVG with DOM calls (no HTML parsed, no library): per-minute bars with
// both axes, their unit and the time range, and the placement phase breakdown read from
// /metrics.
import { el } from "./core.js";

const svgNs = "http://www.w3.org/2000/svg";
const W = 320;
const H = 150;
const M = { left: 38, right: 14, top: 18, bottom: 34 };

function svg(tag, attrs, text) {
  const node = document.createElementNS(svgNs, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

// A round top for the y axis (1, 2, 5 × 10^n) at or above `max`.
export function niceMax(max) {
  if (max <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= max);
}

function axes(node, top, labels, unit) {
  const x0 = M.left;
  const y0 = H - M.bottom;
  const gx = svg("g", { class: "axis axis-x" });
  const gy = svg("g", { class: "axis axis-y" });
  gx.appendChild(svg("line", { x1: x0, y1: y0, x2: W - M.right, y2: y0 }));
  gy.appendChild(svg("line", { x1: x0, y1: M.top, x2: x0, y2: y0 }));
  // Counts get whole ticks: the middle one only where it is a whole number (or the unit is
  // fractional anyway, top below 1).
  for (const v of Number.isInteger(top / 2) || top < 1 ? [0, top / 2, top] : [0, top]) {
    const y = y0 - (v / top) * (y0 - M.top);
    gy.appendChild(svg("line", { class: "grid", x1: x0, y1: y, x2: W - M.right, y2: y }));
    gy.appendChild(svg("text", { x: x0 - 4, y: y + 3, "text-anchor": "end" },
                       Number.isInteger(v) ? String(v) : v.toFixed(1)));
  }
  const n = labels.length;
  const step = (W - M.left - M.right) / n;
  for (const i of [0, Math.floor(n / 2), n - 1]) {
    if (i < 0 || i >= n) continue;
    const anchor = i === n - 1 && n > 1 ? "end" : i === 0 && n > 1 ? "start" : "middle";
    gx.appendChild(svg("text", { x: x0 + step * (i + 0.5), y: y0 + 12, "text-anchor": anchor },
                       labels[i]));
  }
  gx.appendChild(svg("text", { class: "unit", x: (x0 + W - M.right) / 2, y: H - 4,
                               "text-anchor": "middle" }, "minute (UTC)"));
  gy.appendChild(svg("text", { class: "unit", x: 2, y: 9 }, unit));
  node.append(gx, gy);
}

// Bars per minute with their axes; `overlay` (busy answers) drawn over the same bars.
export function barChart({ key, title, unit, minutes, values, overlay }) {
  const node = svg("svg", { id: `chart-${key}`, class: "chart", viewBox: `0 0 ${W} ${H}`,
                            role: "img", "aria-label": `${title}, ${unit}` });
  const top = niceMax(Math.max(0, ...values));
  const labels = minutes.map((m) => m.slice(11, 16));
  axes(node, top, labels, unit);
  const step = (W - M.left - M.right) / Math.max(1, values.length);
  const y0 = H - M.bottom;
  const bar = (i, v, cls) => {
    const h = (v / top) * (y0 - M.top);
    const r = svg("rect", { class: cls, x: M.left + step * i + step * 0.1, width: step * 0.8,
                            y: y0 - h, height: h });
    r.appendChild(svg("title", {}, `${labels[i]} UTC: ${v}${cls === "busy" ? " busy" : ""}`));
    node.appendChild(r);
  };
  values.forEach((v, i) => { if (v > 0) bar(i, v, "bar"); });
  (overlay || []).forEach((v, i) => { if (v > 0) bar(i, v, "busy"); });
  const sum = values.reduce((a, b) => a + b, 0);
  const range = minutes.length ? `${labels[0]}–${labels.at(-1)} UTC` : "";
  return el("figure", { class: "chart-box" },
            el("figcaption", {}, `${title} `, el("span", { class: "range" }, range),
               ` (${sum} in all)`), node);
}

// The placement phase histogram, onceorder_order_phase_seconds{phase, lines}: its _sum and
// _count per series, since the server started. Null when /metrics does not have it.
export function parsePhases(text) {
  const re = /^onceorder_order_phase_seconds_(sum|count)\{([^}]*)\}\s+(\S+)$/gm;
  const rows = new Map(); // lines → {phase: {sum, count}}
  for (const m of text.matchAll(re)) {
    const labels = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (!labels.phase || !labels.lines) continue;
    const row = rows.get(labels.lines) || {};
    row[labels.phase] = { ...(row[labels.phase] || {}), [m[1]]: Number(m[3]) };
    rows.set(labels.lines, row);
  }
  return rows.size ? rows : null;
}

export const phases = ["lock_wait", "round_trips", "other"];
const linesOrder = ["1", "2-5", "6-10", "11-20"];

// One stacked bar per cart size: the mean milliseconds of each phase of a placement.
export function phaseChart(rows) {
  const groups = [...rows.keys()].sort((a, b) => linesOrder.indexOf(a) - linesOrder.indexOf(b));
  const mean = (p) => (p && p.count ? (1000 * p.sum) / p.count : 0);
  const totals = groups.map((g) => phases.reduce((a, ph) => a + mean(rows.get(g)[ph]), 0));
  const top = niceMax(Math.max(0.001, ...totals));
  const node = svg("svg", { id: "chart-phases", class: "chart", viewBox: `0 0 ${W} ${H}`,
                            role: "img", "aria-label": "mean milliseconds per placement phase" });
  axes(node, top, groups.map((g) => `${g} line(s)`), "ms per order");
  node.querySelector(".axis-x .unit").textContent = "lines in the cart";
  const step = (W - M.left - M.right) / groups.length;
  const y0 = H - M.bottom;
  groups.forEach((g, i) => {
    let y = y0;
    for (const ph of phases) {
      const h = (mean(rows.get(g)[ph]) / top) * (y0 - M.top);
      const r = svg("rect", { class: `phase ${ph}`, x: M.left + step * i + step * 0.2,
                              width: step * 0.6, y: y - h, height: h });
      r.appendChild(svg("title", {}, `${g} line(s), ${ph}: ${mean(rows.get(g)[ph]).toFixed(2)} ms`));
      node.appendChild(r);
      y -= h;
    }
  });
  const key = el("p", { class: "key" }, phases.map((ph) => el("span", { class: `swatch ${ph}` }, ph)));
  return el("figure", { class: "chart-box wide" },
            el("figcaption", {}, "Placement phases: mean ms per order by cart size ",
               el("span", { class: "range" }, "since the server started")), node, key);
}
