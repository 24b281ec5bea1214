// The board: draws an instance, the exact answer, the model's answer and one decoding step.
// Sequences from the server are 0-based; labels on the page are 1-based, like the paper's files,
// or the points' names where they were read from a file with a name column (view.names).
// Model tokens: 0 = end symbol, j = input j-1 (ptrnet/tasks/base.py).
// What is drawn follows the task's drawing kind (Task.drawing, sent by GET /api/tasks): "hull"
// (closed polygon of chosen points), "tour" (path through the points), "triangles", "bars"
// (values in output order), "subset" (chosen points ringed, no lines: a set has no order) or
// "routes" (the first point a depot drawn as a square, each route from it and back, the model's
// one colour per route); never the task's name.

export const SIZE = 600;
const PAD = 30;
const SPAN = SIZE - 2 * PAD;
const NS = "http://www.w3.org/2000/svg";

/** Unit-square coordinates -> SVG pixels (y points up in the data, down on screen). */
export function toPx([x, y]) {
  return [PAD + x * SPAN, SIZE - PAD - y * SPAN];
}

/** SVG pixels -> unit-square coordinates, clamped to [0, 1]. */
export function fromPx(px, py) {
  const clamp = (v) => Math.min(1, Math.max(0, v));
  return [clamp((px - PAD) / SPAN), clamp((SIZE - PAD - py) / SPAN)];
}

/** Create an SVG element with attributes and append it to parent. */
export function add(parent, tag, attrs = {}, text = null) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== null) el.textContent = text;
  parent.appendChild(el);
  return el;
}

const pathData = (points, seq) =>
  seq.map((i, k) => `${k ? "L" : "M"}${toPx(points[i]).join(",")}`).join(" ");

/** Triangles (sorted index triples as "i,j,k" keys) of a flattened sequence; tail dropped. */
export function triangleKeys(seq) {
  const keys = [];
  for (let k = 0; k + 2 < seq.length; k += 3) {
    keys.push(seq.slice(k, k + 3).sort((a, b) => a - b).join(","));
  }
  return keys;
}

/** What the model has emitted before step `step` (0-based inputs), or its whole output. */
export function emitted(model, step) {
  if (step === null || !model.trace || step >= model.trace.tokens.length) return model.sequence;
  return model.trace.tokens.slice(0, step).filter((t) => t > 0).map((t) => t - 1);
}

/** Route colours: classes r0..r7 of style.css (ptrnet/viz/draw.py's ROUTE_COLOURS; the page's
 * Content-Security-Policy allows no inline style). */
const ROUTE_COLOURS = 8;

/** The routes of a sequence (0 = the depot, between two routes), each as the stops driven
 * [0, ..., 0]; with open = true the last one is left where it is (a decoding still under way). */
export function routeStops(seq, open = false) {
  const routes = [[]];
  for (const i of seq) {
    if (i === 0) routes.push([]);
    else routes[routes.length - 1].push(i);
  }
  const kept = routes.filter((r) => r.length);
  return kept.map((r, k) => (open && k === kept.length - 1 && seq[seq.length - 1] !== 0 ? [0, ...r] : [0, ...r, 0]));
}

/** Whether every index of a sequence is a point we still have (results can be stale). */
const fits = (seq, n) => seq.every((i) => i >= 0 && i < n);

function drawReference(g, drawing, points, ref) {
  if (drawing === "hull") {
    add(g, "path", { d: pathData(points, ref) + " Z", class: "ref hull" });
  } else if (drawing === "tour") {
    add(g, "path", { d: pathData(points, ref), class: "ref tour" });
  } else if (drawing === "triangles") {
    for (const key of triangleKeys(ref)) {
      add(g, "path", { d: pathData(points, key.split(",").map(Number)) + " Z", class: "ref tri" });
    }
  } else if (drawing === "subset") {
    for (const i of ref) ring(g, points[i], 13, "ref subset");
  } else if (drawing === "routes") {
    for (const stops of routeStops(ref)) add(g, "path", { d: pathData(points, stops), class: "ref route" });
  }
}

/** A model's routes, one colour each; the last one open while the decoding is under way. */
function drawRoutes(g, points, seq, open) {
  routeStops(seq, open).forEach((stops, k) => {
    add(g, "path", { d: pathData(points, stops), class: `model route r${k % ROUTE_COLOURS} model-path` });
  });
}

/** The depot (the first point) as a square under its dot. */
function drawDepot(g, point) {
  const [x, y] = toPx(point);
  add(g, "rect", { x: x - 9, y: y - 9, width: 18, height: 18, class: "depot" });
}

/** A circle of radius r (pixels) around a unit-square point. */
function ring(g, point, r, cls) {
  const [cx, cy] = toPx(point);
  add(g, "circle", { cx, cy, r, class: cls });
}

/** A set's choices: rings, red and dashed where the exact answer does not choose the point. */
function drawChoices(g, points, seq, ref) {
  const truth = new Set(ref);
  for (const i of seq) ring(g, points[i], 9, truth.has(i) ? "model subset" : "model subset wrong");
}

function drawModel(g, drawing, points, seq, ref, open = false) {
  if (drawing === "subset") {
    drawChoices(g, points, seq, ref);
    return;
  }
  if (drawing === "routes") {
    drawRoutes(g, points, seq, open);
    return;
  }
  if (drawing !== "triangles") {
    if (seq.length) add(g, "path", { d: pathData(points, seq), class: "model model-path" });
    return;
  }
  const truth = new Set(triangleKeys(ref));
  for (const key of triangleKeys(seq)) {
    const cls = truth.has(key) ? "model tri" : "model tri wrong";
    add(g, "path", { d: pathData(points, key.split(",").map(Number)) + " Z", class: cls });
  }
  const tail = seq.slice(seq.length - (seq.length % 3));
  if (tail.length > 1) add(g, "path", { d: pathData(points, tail), class: "model partial" });
}

/** A searched answer's tour as the model decoded it (model.decoded_sequence), dashed grey under
 * the searched one (model.sequence), so that what the search changed shows. */
function drawDecoded(g, points, model) {
  const own = model.decoded_sequence;
  if (own && own.length && fits(own, points.length)) {
    add(g, "path", { d: pathData(points, own), class: "model decoded" });
  }
}

/** Per-point decoration for a decoding step: probability, mask, already chosen, current. */
export function stepMarks(model, step, n) {
  const trace = model && model.trace;
  if (!trace || step === null || step >= trace.tokens.length) return null;
  if (trace.probs[step].length !== n + 1) return null; // an answer for other points, in flight
  const chosen = new Set(emitted(model, step));
  return {
    prob: trace.probs[step].slice(1, n + 1),
    allowed: trace.allowed[step].slice(1, n + 1).map(Boolean),
    chosen,
    current: trace.tokens[step] - 1, // -1: the end symbol
    endProb: trace.probs[step][0],
    endAllowed: Boolean(trace.allowed[step][0]),
  };
}

const NAME_CHARS = 16; // a longer name is cut on the board (its tooltip has it whole)

/** A point's label on the board: its name where it has one (cut to NAME_CHARS), else its number. */
function pointText(i, names) {
  const name = names && names[i];
  if (!name) return String(i + 1);
  return name.length > NAME_CHARS ? `${name.slice(0, NAME_CHARS - 1)}…` : name;
}

/** A point's tooltip: number, name and coordinates in the units of the file it was read from
 * (file.coords: degrees for cities), else the unit square's. */
function pointTip(i, point, names, file) {
  const name = names && names[i] ? ` ${names[i]}` : "";
  const coords = file ? file.coords[i] : point;
  return `${i + 1}:${name} (${coords.map((v) => Number(v.toPrecision(6))).join(", ")})`;
}

function drawPoint(g, i, [x, y], marks, labels, view) {
  const cls = ["point"];
  if (marks && !marks.allowed[i]) cls.push("masked");
  if (marks && marks.chosen.has(i)) cls.push("chosen");
  if (marks && marks.current === i) cls.push("current");
  const p = marks ? marks.prob[i] : 0;
  if (p > 0) add(g, "circle", { cx: x, cy: y, r: 5 + 18 * Math.sqrt(p), class: "halo" });
  const dot = add(g, "circle", { cx: x, cy: y, r: 5, class: cls.join(" "), "data-index": i });
  add(dot, "title", {}, pointTip(i, view.points[i], view.names, view.file));
  if (labels && view.names && view.names[i]) {
    const left = x > SIZE - 120; // near the right edge a name runs leftwards, inside the board
    const attrs = { x: left ? x - 7 : x + 7, y: y - 7, class: left ? "label named end" : "label named" };
    add(g, "text", attrs, pointText(i, view.names));
  } else if (labels) add(g, "text", { x: x + 7, y: y - 7, class: "label" }, String(i + 1));
  if (p >= 0.005) add(g, "text", { x: x + 7, y: y + 14, class: "prob" }, percent(p));
}

export const percent = (p) => `${(100 * p).toFixed(p < 0.1 ? 1 : 0)}%`;

function drawPlane(svg, view, marks) {
  const { drawing, points, result } = view;
  add(svg, "rect", { x: PAD, y: PAD, width: SPAN, height: SPAN, class: "frame" });
  const px = points.map(toPx);
  if (drawing === "routes" && points.length) drawDepot(add(svg, "g"), points[0]);
  if (result && fits(result.reference, points.length)) {
    drawReference(add(svg, "g"), drawing, points, result.reference);
    const model = result.model;
    if (model && fits(model.sequence, points.length)) {
      const g = add(svg, "g");
      drawDecoded(g, points, model);
      const seq = emitted(model, view.step);
      drawModel(g, drawing, points, seq, result.reference, seq !== model.sequence);
    }
  }
  const g = add(svg, "g", { class: "points" });
  px.forEach((p, i) => drawPoint(g, i, p, marks, points.length <= 60, view));
}

/** Bars: inputs in the given order (top), sorted output (bottom). */
function drawBars(svg, view, marks) {
  const values = view.points.map((p) => p[0]);
  const lo = Math.min(0, ...values);
  const hi = Math.max(lo + 1e-9, ...values);
  const width = SPAN / Math.max(values.length, 1);
  const bar = (g, k, v, top, cls, i = null) => {
    const h = ((v - lo) / (hi - lo)) * (SIZE / 2 - 2 * PAD);
    const attrs = { x: PAD + k * width + width * 0.1, y: top - h, width: width * 0.8, height: h };
    if (i !== null) attrs["data-index"] = i;
    return add(g, "rect", { ...attrs, class: cls });
  };
  const inputs = add(svg, "g", { class: "points" });
  add(svg, "text", { x: PAD, y: PAD - 10, class: "caption" }, "input, in the given order");
  values.forEach((v, i) => {
    const cls = ["point", "bar"];
    if (marks && !marks.allowed[i]) cls.push("masked");
    if (marks && marks.current === i) cls.push("current");
    bar(inputs, i, v, SIZE / 2 - PAD, cls.join(" "), i);
    const x = PAD + (i + 0.5) * width;
    if (values.length <= 60) add(inputs, "text", { x, y: SIZE / 2 - 12, class: "label mid" }, String(i + 1));
    if (marks && marks.prob[i] >= 0.005) {
      add(inputs, "text", { x, y: PAD + 8, class: "prob mid" }, percent(marks.prob[i]));
    }
  });
  drawSortedOutput(svg, view, values, bar);
}

function drawSortedOutput(svg, view, values, bar) {
  const { result } = view;
  add(svg, "text", { x: PAD, y: SIZE / 2 + 20, class: "caption" }, "output: exact (filled) and model (outlined)");
  if (!result || !fits(result.reference, values.length)) return;
  const g = add(svg, "g");
  result.reference.forEach((i, k) => bar(g, k, values[i], SIZE - PAD, "ref bar"));
  const model = result.model;
  if (!model || !fits(model.sequence, values.length)) return;
  emitted(model, view.step).forEach((i, k) => {
    const right = k < result.reference.length && values[result.reference[k]] === values[i];
    bar(g, k, values[i], SIZE - PAD, right ? "model bar model-path" : "model bar wrong model-path");
  });
}

/** Redraw the board for view = {drawing, points, result, step}. Returns the step marks. */
export function render(svg, view) {
  svg.replaceChildren();
  const marks = view.result ? stepMarks(view.result.model, view.step, view.points.length) : null;
  if (view.drawing === "bars") drawBars(svg, view, marks);
  else drawPlane(svg, view, marks);
  return marks;
}

/** The row of a point added at `unit` (x, y) to `points` for `task` (its GET /api/tasks entry):
 * x and y alone for a task of two numbers a row; else the last row's other numbers (a customer
 * like the last one, under the same capacity), or where the board holds one row at most the
 * task's `added_rows`: a depot first, then a customer sharing the first row's capacity (a
 * column both templates give the same value). */
export function addedRow(unit, points, task) {
  if (task.dim <= 2) return unit;
  const templates = task.added_rows;
  const last = points[points.length - 1];
  if (points.length > 1 || (last && !templates)) return [...unit, ...last.slice(2)];
  if (!templates) return unit;
  const [first, later] = templates;
  if (!last) return [...unit, ...first];
  return [...unit, ...later.map((v, k) => (v === first[k] ? last[2 + k] : v))];
}
