// A small SVG line chart: axes with ticks, one polyline per series, a legend. No dependencies.

const NS = "http://www.w3.org/2000/svg";
const M = { left: 48, right: 185, top: 26, bottom: 40 }; // legend in the right margin

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

const fmt = (v) => (Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 0.01) ? v.toExponential(0) : String(v));

/**
 * Draw `series` = [{label, color, dash?, points: [[x, y], ...]}] on `svg`.
 * Options: title, xLabel, yMin / yMax (fixed y range; else from the data).
 */
export function lineChart(svg, series, { title = "", xLabel = "", yMin = null, yMax = null } = {}) {
  svg.replaceChildren();
  const width = svg.viewBox.baseVal.width;
  const height = svg.viewBox.baseVal.height;
  const all = series.flatMap((s) => s.points);
  add(svg, "text", { x: M.left, y: 16, class: "chart-title" }, title);
  if (!all.length) {
    add(svg, "text", { x: width / 2, y: height / 2, class: "chart-empty" }, "no data yet");
    return;
  }
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs, x0 + 1);
  const y0 = yMin ?? Math.min(...ys);
  const y1 = Math.max(yMax ?? Math.max(...ys), y0 + 1e-9);
  const sx = (x) => M.left + ((x - x0) / (x1 - x0)) * (width - M.left - M.right);
  const sy = (y) => height - M.bottom - ((y - y0) / (y1 - y0)) * (height - M.top - M.bottom);
  drawAxes(svg, { x0, x1, y0, y1, sx, sy, width, height, xLabel });
  series.forEach((s, k) => {
    if (!s.points.length) return;
    const d = s.points.map(([x, y], i) => `${i ? "L" : "M"}${sx(x)},${sy(y)}`).join(" ");
    add(svg, "path", { d, class: "series", stroke: s.color, "stroke-dasharray": s.dash || "" });
    if (s.points.length < 30) {
      for (const [x, y] of s.points) add(svg, "circle", { cx: sx(x), cy: sy(y), r: 2.5, fill: s.color });
    }
    const ly = M.top + 4 + 14 * k;
    const lx = width - M.right + 12;
    add(svg, "line", { x1: lx, x2: lx + 18, y1: ly, y2: ly, stroke: s.color,
      "stroke-dasharray": s.dash || "", class: "series" });
    add(svg, "text", { x: lx + 22, y: ly + 4, class: "chart-legend" }, s.label);
  });
}

function drawAxes(svg, { x0, x1, y0, y1, sx, sy, width, height, xLabel }) {
  const g = add(svg, "g", { class: "axes" });
  add(g, "line", { x1: M.left, x2: width - M.right, y1: sy(y0), y2: sy(y0) });
  add(g, "line", { x1: M.left, x2: M.left, y1: sy(y0), y2: sy(y1) });
  for (const v of ticks(x0, x1)) {
    add(g, "text", { x: sx(v), y: height - M.bottom + 14, class: "tick mid" }, fmt(v));
  }
  for (const v of ticks(y0, y1)) {
    add(g, "line", { x1: M.left, x2: width - M.right, y1: sy(v), y2: sy(v), class: "grid" });
    add(g, "text", { x: M.left - 5, y: sy(v) + 4, class: "tick end" }, fmt(v));
  }
  add(g, "text", { x: (M.left + width - M.right) / 2, y: height - 6, class: "tick mid" }, xLabel);
}
