// Lesson panel "a pointer grown by itself" (POST /api/lesson/induction): the bundled induction
// model's attention on a sequence A A, A typed or drawn at random. The heatmap is one head's
// attention, query (row) by key (column); the outlined cells are the stripe that head should
// follow: key = query - L + 1 for layer 2 (the position after the previous occurrence of the
// query's token), key = query - 1 for layer 1 (the previous token).

import { post } from "./api.js";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
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

/** The heatmap of `pattern` (T rows of T weights) with the stripe key = query - offset, for
 * queries start..stop - 1. */
function drawHeatmap(pattern, offset, start, stop) {
  const svg = $("ih-map");
  svg.replaceChildren();
  const size = pattern.length;
  const margin = 34;
  const cell = (600 - margin) / size;
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
  const font = Math.min(12, cell * 0.8);
  tokens.forEach((t, i) => {
    el(svg, "text", { x: margin + (i + 0.5) * cell, y: margin - 4, class: "label mid",
      "font-size": font }, name(t));
    el(svg, "text", { x: margin - 4, y: margin + (i + 0.75) * cell, class: "label end",
      "font-size": font }, name(t));
  });
}

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
  if (layer2) drawHeatmap(answer.layer2, half - 1, half + 1, size - 1);
  else drawHeatmap(answer.layer1, 1, 1, size);
  drawTokens();
  const right = answer.right.filter(Boolean).length;
  const head = layer2 ? `layer 2, head ${answer.layer2_head + 1}, mean attention on the stripe ` +
    `${(100 * answer.induction_score).toFixed(0)}%` : `layer 1, head ${answer.layer1_head + 1}, ` +
    `mean attention on the previous token ${(100 * answer.previous_token_score).toFixed(0)}%`;
  $("ih-status").textContent = `${head}. Repeated half: ${right} of ${answer.right.length} ` +
    `next tokens predicted right (framed green; red: wrong). First-half tokens cannot be ` +
    `predicted: nothing before them says what they are.`;
}

async function ask(tokens) {
  const body = tokens ? { tokens } : { seed };
  try {
    answer = await post("/api/lesson/induction", body);
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
  ask(null);
}
