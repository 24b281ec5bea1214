// Lesson panel "a pointer grown by itself" (POST /api/lesson/induction): the bundled induction
// model's attention on a sequence A A, A typed or drawn at random. The heatmap is one head's
// attention, query (row) by key (column); the outlined cells are the stripe that head should
// follow: key = query - L + 1 for layer 2 (the position after the previous occurrence of the
// query's token), key = query - 1 for layer 1 (the previous token).

import { newestOnly } from "./api.js";

const postNewest = newestOnly(); // this panel's requests: only the newest answer is drawn

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const SIZE = 600; // the map's viewBox is SIZE x SIZE units
const LEAST_PX = 12; // the axis labels read at this size on screen at least ...
const LARGE_PX = 20; // ... and at this size with large text (a projector)
let seed = 0;
let answer = null;
let bos = -1; // the model's beginning-of-sequence token, shown as ⟨s⟩

const name = (t) => (t === bos ? "⟨s⟩" : String(t));

function el(parent, tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  parent.appendChild(node);
  return node;
}

/** How the axis labels of a map of `size` tokens are laid out, in the map's units: font size
 * (LEAST_PX on screen at least, LARGE_PX with large text, whatever size the map is drawn at),
 * margin (room for three characters), cell size, and `every`: one token in `every` is labelled,
 * so that no two labels overlap (the cells' tooltips and the tokens beside the map name them
 * all). Column labels are turned upright, so a column needs only a line's height. */
function labelLayout(svg, size) {
  const width = svg.getBoundingClientRect().width;
  const scale = width > 0 ? width / SIZE : 1; // screen pixels per unit
  const least = (document.body.classList.contains("large") ? LARGE_PX : LEAST_PX) / scale;
  const roughCell = (SIZE - 2 * least - 8) / size;
  const font = Math.max(least, Math.min(0.6 * roughCell, 18));
  const margin = Math.ceil(2 * font + 8);
  const cell = (SIZE - margin) / size;
  return { font, margin, cell, every: Math.ceil((1.25 * font) / cell) };
}

/** A token's axis label, `font` units high (inline CSSOM style: the page's CSP allows it). */
function label(svg, attrs, font, text) {
  const node = el(svg, "text", { "dominant-baseline": "central", ...attrs }, text);
  node.style.fontSize = `${font}px`;
  return node;
}

/** The heatmap of `pattern` (T rows of T weights) with the stripe key = query - offset, for
 * queries start..stop - 1. Returns how many tokens there are per axis label (1: every one). */
function drawHeatmap(pattern, offset, start, stop) {
  const svg = $("ih-map");
  svg.replaceChildren();
  const size = pattern.length;
  const { font, margin, cell, every } = labelLayout(svg, size);
  const tokens = answer.tokens;
  pattern.forEach((row, q) => {
    row.forEach((a, k) => {
      if (k > q) return; // causal: no weight on the future
      const shade = Math.round(255 * (1 - a));
      const rect = el(svg, "rect", { x: margin + k * cell, y: margin + q * cell, width: cell,
        height: cell, fill: `rgb(${shade},${shade},${shade})`, class: "ih-cell" });
      el(rect, "title", {}, `query ${q} (token ${name(tokens[q])}) → key ${k} (token ${name(tokens[k])}): ${(100 * a).toFixed(1)}%`);
    });
    const k = q - offset;
    if (q >= start && q < stop && k >= 0) {
      el(svg, "rect", { x: margin + k * cell, y: margin + q * cell, width: cell, height: cell,
        class: "ih-stripe" });
    }
  });
  tokens.forEach((t, i) => {
    if (i % every) return;
    const x = margin + (i + 0.5) * cell;
    const y = margin - 5;
    label(svg, { x, y, class: "label ih-col", transform: `rotate(-90 ${x} ${y})` }, font, name(t));
    label(svg, { x: margin - 5, y: margin + (i + 0.5) * cell, class: "label end ih-row" }, font,
      name(t));
  });
  return every;
}

const ordinal = (k) => (k === 2 ? "2nd" : k === 3 ? "3rd" : `${k}th`);

function drawTokens() {
  const box = $("ih-tokens");
  box.replaceChildren();
  answer.tokens.forEach((t, i) => {
    const span = document.createElement("span");
    span.className = "word";
    span.textContent = name(t);
    const r = i - answer.half - 2; // the prediction of this token was made at position i - 1
    if (r >= 0 && r < answer.right.length) {
      span.classList.add(answer.right[r] ? "copied" : "wrongly");
      span.title = `predicted ${answer.predicted[i - 1]} at position ${i - 1}`;
    }
    box.appendChild(span);
  });
}

function draw() {
  const layer2 = $("ih-layer").value === "2";
  const half = answer.half;
  const size = answer.tokens.length;
  const every = layer2
    ? drawHeatmap(answer.layer2, half - 1, half + 1, size - 1)
    : drawHeatmap(answer.layer1, 1, 1, size);
  drawTokens();
  const right = answer.right.filter(Boolean).length;
  const head = layer2 ? `layer 2, head ${answer.layer2_head + 1}, mean attention on the stripe ` +
    `${(100 * answer.induction_score).toFixed(0)}%` : `layer 1, head ${answer.layer1_head + 1}, ` +
    `mean attention on the previous token ${(100 * answer.previous_token_score).toFixed(0)}%`;
  $("ih-status").textContent = `${head}. Repeated half: ${right} of ${answer.right.length} ` +
    `next tokens predicted right (framed green; red: wrong). First-half tokens cannot be ` +
    `predicted: nothing before them says what they are.` + (every > 1 ? ` The axes label ` +
    `every ${ordinal(every)} token; a cell's tooltip names its query and key.` : "");
}

async function ask(tokens) {
  const body = tokens ? { tokens } : { seed };
  try {
    const data = await postNewest("/api/lesson/induction", body);
    if (!data) return; // overtaken by a later request
    answer = data;
    if (!tokens) $("ih-sequence").value = answer.tokens.slice(1, answer.half + 1).join(" ");
    draw();
  } catch (err) {
    $("ih-status").textContent = `Could not run the model: ${err.message}`;
  }
}

function typed() {
  const words = $("ih-sequence").value.trim().split(/[\s,]+/).filter(Boolean);
  const tokens = words.map(Number);
  if (!tokens.length || tokens.some((t) => !Number.isInteger(t))) {
    $("ih-status").textContent = "Type whole numbers separated by spaces.";
    return;
  }
  ask(tokens);
}

export function initInduction(info) {
  if (!info.induction) {
    $("ih-missing").textContent = info.induction_missing;
    $("ih-missing").classList.remove("hidden");
    for (const id of ["ih-random", "ih-run", "ih-sequence", "ih-layer"]) $(id).disabled = true;
    return;
  }
  const model = info.induction;
  bos = model.bos;
  const seen = model.measured;
  const measured = seen ? ` Measured on ${seen.count} fresh sequences: repeated half ` +
    `${(100 * seen.repeat_accuracy).toFixed(1)}% right.` : "";
  $("ih-about").textContent = `Model: 2 attention-only layers, d = ${model.d_model}, ` +
    `${model.heads} head(s) per layer, tokens 0–${model.vocab - 1}, A up to ${model.length} ` +
    `tokens, ${model.steps} training steps.${measured}`;
  $("ih-random").addEventListener("click", () => { seed += 1; ask(null); });
  $("ih-run").addEventListener("click", typed);
  $("ih-sequence").addEventListener("keydown", (e) => { if (e.key === "Enter") typed(); });
  $("ih-layer").addEventListener("change", () => { if (answer) draw(); });
  // The labels' size follows the map's drawn size and the large-text switch: redraw on both.
  let pending = false;
  const redraw = () => {
    if (pending || !answer) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  };
  window.addEventListener("resize", redraw);
  $("cl-large").addEventListener("change", redraw);
  ask(null);
}
