// Lesson panel "a seq2seq cannot say 6": the fixed-vocabulary baseline and the Ptr-Net on the
// same convex-hull instance (POST /api/lesson/vocabulary).

import { newestOnly } from "./api.js";
import { add, percent, render, toPx } from "./board.js";

const postNewest = newestOnly(); // this panel's requests: only the newest answer is drawn

const $ = (id) => document.getElementById(id);
let seed = 0;

const path = (points, seq) => seq.map((i, k) => `${k ? "L" : "M"}${toPx(points[i]).join(",")}`).join(" ");
const named = (seq) => (seq.length ? seq.map((i) => i + 1).join(" → ") : "nothing");
const verdict = (m) => (m.accuracy === 1 ? "the right hull" : "not the hull");
/** "validation accuracy 4.3%" from a checkpoint's record, or "". */
const validation = (info) =>
  info.validation === null || info.validation === undefined
    ? ""
    : `; its validation ${info.metric} is ${(100 * info.validation).toFixed(1)}%`;

function drawBoard(data) {
  const svg = $("vc-board");
  const model = data.pointer ? { sequence: data.pointer.sequence, trace: null } : null;
  render(svg, { drawing: "hull", points: data.points, result: { ...data, model }, step: null });
  const seq = data.seq2seq.sequence;
  if (seq.length > 1) add(svg, "path", { d: path(data.points, seq), class: "s2s-path" });
  for (const i of data.missing) {
    const [x, y] = toPx(data.points[i]);
    add(svg, "circle", { cx: x, cy: y, r: 13, class: "missing-point" });
    add(svg, "text", { x: x + 10, y: y + 22, class: "prob" }, "no class");
  }
}

/** One row per seq2seq step: its softmax over the classes it has, "—" for inputs it lacks. */
function drawTable(data) {
  const table = $("vc-table");
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  head.insertCell().textContent = "step";
  const cols = ["⇐ end", ...Array.from({ length: data.vocabulary }, (_, j) => String(j + 1))];
  for (const c of cols) head.appendChild(document.createElement("th")).textContent = c;
  for (const i of data.missing) {
    const th = head.appendChild(document.createElement("th"));
    th.textContent = String(i + 1);
    th.className = "absent";
    th.title = `the seq2seq has no output class for point ${i + 1}`;
  }
  const body = table.createTBody();
  data.seq2seq.probs.forEach((row, t) => {
    const tr = body.insertRow();
    tr.insertCell().textContent = String(t + 1);
    row.forEach((p, c) => {
      const cell = tr.insertCell();
      cell.textContent = percent(p);
      cell.style.background = `rgba(148, 103, 189, ${Math.min(0.8, p)})`;
      if (c === data.seq2seq.tokens[t]) cell.className = "chosen";
    });
    for (const _ of data.missing) {
      const cell = tr.insertCell();
      cell.textContent = "—";
      cell.className = "absent";
    }
  });
}

function summarise(data) {
  const s2s = data.seq2seq;
  const lines = [ // [text, shown only with the exact answer]
    [`Seq2seq (trained on n = ${data.vocabulary}, ${data.vocabulary + 1} output classes` +
      `${validation(s2s.info)}): ${named(s2s.sequence)}, ${verdict(s2s.metrics)}.`, false],
  ];
  if (data.missing.length) {
    const hull = new Set(data.reference);
    const needed = data.missing.filter((i) => hull.has(i)).map((i) => i + 1);
    if (needed.length) {
      lines.push([`The hull needs point ${needed.join(", ")}, which the seq2seq cannot output.`, true]);
    }
  }
  lines.push([data.pointer
    ? `Ptr-Net (trained on n = ${data.pointer.info.trained_sizes}${validation(data.pointer.info)}): ${named(data.pointer.sequence)}, ${verdict(data.pointer.metrics)}.`
    : "No Ptr-Net for convex hull is loaded.", false]);
  $("vc-summary").replaceChildren(...lines.map(([line, answerOnly]) => {
    const p = document.createElement("p");
    p.textContent = line;
    if (answerOnly) p.className = "answer-only";
    return p;
  }));
}

async function ask() {
  const body = { n: Number($("vc-n").value), seed };
  $("vc-status").textContent = "…";
  try {
    const data = await postNewest("/api/lesson/vocabulary", body);
    if (!data) return; // overtaken by a later request
    seed = data.seed;
    drawBoard(data);
    drawTable(data);
    summarise(data);
    $("vc-status").textContent = `instance ${data.seed} of the lesson stream, n = ${data.n}`;
  } catch (err) {
    $("vc-status").textContent = `Could not ask: ${err.message}`;
  }
}

export function initVocabulary(info) {
  if (!info.seq2seq) {
    $("vc-status").textContent = info.seq2seq_missing;
    $("vc-new").disabled = true;
    return;
  }
  $("vc-new").addEventListener("click", () => { seed += 1; ask(); });
  $("vc-n").addEventListener("change", ask);
  ask();
}
