// A small SVG line chart: axes with ticks and labels, one line per series, a legend under the
// plot that says what every line measures. No dependencies. A chart is drawn at the width the
// page gives it, in the chart's font size (style.css), and redrawn when that width changes.

const NS = "http://www.w3.org/2000/svg";

function add(parent, tag, attrs = {}, text = null) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== null) el.textContent = text;
  parent.appendChild(el);
  return el;
}

/** About five round tick values covering [lo, hi]. */
function ticks(lo, hi) {
  const raw = (hi - lo) / 5 || 1;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}

/** `text` broken at spaces into lines of at most `max` characters (a longer word stays whole). */
function wrap(text, max) {
  const lines = [];
  for (const word of text.split(" ")) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + 1 + word.length <= max) lines[last] += ` ${word}`;
    else lines.push(word);
  }
  return lines;
}

const fmt = (v) => (Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 0.01) ? v.toExponential(0) : String(v));
/** A tick's text; `percent`: the value is a share (0.2), shown as the page shows rates (20%). */
export const tickText = (v, percent = false) => (percent ? `${+(100 * v).toPrecision(12)}%` : fmt(v));

// Redraw a chart when the width the page gives it changes (window, classroom mode).
const drawn = new WeakMap(); // svg -> {width, series, options}
const resized = new ResizeObserver((entries) => {
  for (const { target } of entries) {
    const last = drawn.get(target);
    if (last && Math.round(target.getBoundingClientRect().width) !== last.width) {
      lineChart(target, last.series, last.options);
    }
  }
});

/**
 * Draw `series` = [{label, color, dash?, about?, points: [[x, y], ...]}] on `svg`: `label` is
 * the legend's line (what the series measures), `about` a longer explanation shown as the
 * line's tooltip. Options: title, xLabel, yLabel, yMin / yMax (fixed y range; else the data's),
 * yPercent (the y values are shares, ticked in percent).
 */
export function lineChart(svg, series, options = {}) {
  const { title = "", xLabel = "", yLabel = "", yMin = null, yMax = null, yPercent = false } = options;
  const width = Math.max(280, Math.round(svg.getBoundingClientRect().width) || 500);
  if (!drawn.has(svg)) resized.observe(svg);
  drawn.set(svg, { width, series, options });
  const em = parseFloat(getComputedStyle(svg).fontSize) || 11;
  const M = { left: 4.6 * em, right: 2 * em, top: 2.2 * em, bottom: 3.4 * em }; // right: a last tick label
  const plotHeight = Math.min(Math.max(0.36 * width, 170), 320);
  const shown = series.filter((s) => s.points.length);
  // legend text starts 2.5 em in; a character is about 0.55 em wide
  const legend = shown.map((s) => wrap(s.label, Math.floor((width - M.left - 3 * em) / (0.55 * em))));
  const legendRows = legend.reduce((sum, lines) => sum + lines.length, 0);
  const height = M.top + plotHeight + M.bottom + legendRows * 1.3 * em + (legendRows ? 0.6 * em : 0);
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  add(svg, "text", { x: M.left, y: 1.4 * em, class: "chart-title" }, title);
  const all = series.flatMap((s) => s.points);
  if (!all.length) {
    add(svg, "text", { x: width / 2, y: M.top + plotHeight / 2, class: "chart-empty" }, "no data yet");
    return;
  }
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs, x0 + 1);
  const y0 = yMin ?? Math.min(...ys);
  const y1 = Math.max(yMax ?? Math.max(...ys), y0 + 1e-9);
  const bottom = M.top + plotHeight;
  const sx = (x) => M.left + ((x - x0) / (x1 - x0)) * (width - M.left - M.right);
  const sy = (y) => bottom - ((y - y0) / (y1 - y0)) * plotHeight;
  drawAxes(svg, { x0, x1, y0, y1, sx, sy, M, em, bottom, xLabel, yLabel, yPercent });
  let row = 0;
  shown.forEach((s, k) => {
    const line = add(svg, "g", { class: "series-group" });
    if (s.about) add(line, "title", {}, `${s.label}. ${s.about}`);
    const d = s.points.map(([x, y], i) => `${i ? "L" : "M"}${sx(x)},${sy(y)}`).join(" ");
    add(line, "path", { d, class: "series", stroke: s.color, "stroke-dasharray": s.dash || "" });
    if (s.points.length < 30) {
      for (const [x, y] of s.points) add(line, "circle", { cx: sx(x), cy: sy(y), r: 2.5, fill: s.color });
    }
    const ly = bottom + M.bottom + 0.6 * em + row * 1.3 * em;
    const entry = add(svg, "g", { class: "legend-entry" });
    if (s.about) add(entry, "title", {}, s.about);
    add(entry, "line", { x1: M.left, x2: M.left + 2 * em, y1: ly, y2: ly, stroke: s.color,
      "stroke-dasharray": s.dash || "", class: "series" });
    const text = add(entry, "text", { y: ly + 0.35 * em, class: "chart-legend" });
    legend[k].forEach((part, i, all) => {
      const attrs = { x: M.left + 2.5 * em, dy: i ? `${1.3 * em}` : "0" };
      add(text, "tspan", attrs, i < all.length - 1 ? `${part} ` : part); // the space: for textContent
    });
    row += legend[k].length;
  });
}

function drawAxes(svg, { x0, x1, y0, y1, sx, sy, M, em, bottom, xLabel, yLabel, yPercent }) {
  const g = add(svg, "g", { class: "axes" });
  const right = sx(x1);
  add(g, "line", { x1: M.left, x2: right, y1: bottom, y2: bottom });
  add(g, "line", { x1: M.left, x2: M.left, y1: bottom, y2: sy(y1) });
  for (const v of ticks(x0, x1)) {
    add(g, "text", { x: sx(v), y: bottom + 1.3 * em, class: "tick mid" }, tickText(v));
  }
  for (const v of ticks(y0, y1)) {
    add(g, "line", { x1: M.left, x2: right, y1: sy(v), y2: sy(v), class: "grid" });
    add(g, "text", { x: M.left - 0.45 * em, y: sy(v) + 0.35 * em, class: "tick end" }, tickText(v, yPercent));
  }
  add(g, "text", { x: (M.left + right) / 2, y: bottom + 2.7 * em, class: "axis-label mid" }, xLabel);
  const cy = (bottom + sy(y1)) / 2;
  add(g, "text", { x: 1.1 * em, y: cy, class: "axis-label mid", transform: `rotate(-90 ${1.1 * em} ${cy})` }, yLabel);
}
