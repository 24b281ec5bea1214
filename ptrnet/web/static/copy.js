// Lesson panel "generate or copy": a sentence of the copy task through the pointer-generator
// (POST /api/lesson/copy). Each output word: p_gen, its generate and copy terms, the mixture P(w),
// the attention over the source (click a word), and the top words of P_vocab and of P(w).

import { newestOnly } from "./api.js";

const postNewest = newestOnly(); // this panel's requests: only the newest answer is drawn

const $ = (id) => document.getElementById(id);
let seed = 0;
let useSentence = false; // true once the user has typed or asked for the box's sentence
let answer = null;
let selected = 0; // output step whose attention shades the source

const pct = (p) => `${(100 * p).toFixed(1)}%`;
const tops = (pairs) => pairs.slice(0, 3).map(([w, p]) => `${w} ${pct(p)}`).join(", ");

function chip(parent, text, cls, title = "") {
  const span = document.createElement("span");
  span.className = `word ${cls}`;
  span.textContent = text;
  if (title) span.title = title;
  parent.appendChild(span);
  return span;
}

function drawWords() {
  const step = answer.steps[selected];
  const source = $("cp-source");
  source.replaceChildren();
  answer.source.forEach((w, i) => {
    const a = step ? step.attention[i] : 0;
    const oov = answer.oov.includes(w);
    const span = chip(source, w, oov ? "oov" : "", `attention ${pct(a)}${oov ? ", not in the vocabulary" : ""}`);
    span.style.background = `rgba(255, 127, 14, ${Math.min(0.85, a)})`;
  });
  const output = $("cp-output");
  output.replaceChildren();
  answer.steps.forEach((s, t) => {
    const how = s.copy > s.generate ? "copied" : "generated";
    const span = chip(output, s.word, `${how}${t === selected ? " current" : ""}`,
      `${how}: generate ${pct(s.generate)} + copy ${pct(s.copy)} = ${pct(s.mixture)}`);
    span.addEventListener("click", () => { selected = t; draw(); });
  });
}

function drawTable() {
  const table = $("cp-table");
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  for (const c of ["word", "p_gen", "p_gen·P_vocab(w)", "(1−p_gen)·Σa", "P(w)", "top of P_vocab", "top of P(w)"]) {
    head.appendChild(document.createElement("th")).textContent = c;
  }
  const body = table.createTBody();
  answer.steps.forEach((s, t) => {
    const tr = body.insertRow();
    if (t === selected) tr.className = "current";
    const cells = [s.word, s.p_gen.toFixed(3), pct(s.generate), pct(s.copy), pct(s.mixture),
      tops(s.p_vocab_top), tops(s.mixture_top)];
    for (const text of cells) tr.insertCell().textContent = text;
    if (!s.in_vocabulary) tr.cells[0].className = "absent";
    tr.addEventListener("click", () => { selected = t; draw(); });
  });
}

function draw() {
  drawWords();
  drawTable();
  const override = answer.p_gen_override;
  const mode = override === null ? "the model's own p_gen" : `p_gen fixed at ${override}`;
  const target = answer.target ? ` Reference summary: "${answer.target.join(" ")}".` : "";
  $("cp-status").replaceChildren(`Greedy decoding with ${mode}. Output words framed green were ` +
    `mostly copied, blue mostly generated; out-of-vocabulary source words (dashed, red in the ` +
    `table): ${answer.oov.join(", ") || "none"}.`);
  if (target) {
    const span = document.createElement("span");
    span.className = "answer-only";
    span.textContent = target;
    $("cp-status").appendChild(span);
  }
}

async function ask() {
  const body = { seed };
  if (useSentence) body.sentence = $("cp-sentence").value;
  if ($("cp-override").checked) body.p_gen = Number($("cp-pgen").value);
  try {
    const data = await postNewest("/api/lesson/copy", body);
    if (!data) return; // overtaken by a later request
    answer = data;
    selected = Math.min(selected, data.steps.length - 1);
    if (!useSentence) $("cp-sentence").value = data.source.slice(0, -1).join(" ");
    draw();
  } catch (err) {
    $("cp-status").textContent = `Could not summarise: ${err.message}`;
  }
}

function showOverride() {
  const on = $("cp-override").checked;
  $("cp-pgen").disabled = !on;
  $("cp-pgen-value").textContent = on ? `p_gen = ${Number($("cp-pgen").value).toFixed(2)}` : "model's own";
}

export function initCopy(info) {
  if (!info.copy) {
    $("cp-missing").textContent = info.copy_missing;
    $("cp-missing").classList.remove("hidden");
    for (const id of ["cp-random", "cp-run", "cp-override", "cp-sentence"]) $(id).disabled = true;
    return;
  }
  $("cp-random").addEventListener("click", () => { seed += 1; useSentence = false; ask(); });
  $("cp-run").addEventListener("click", () => { useSentence = true; ask(); });
  $("cp-sentence").addEventListener("keydown", (e) => { if (e.key === "Enter") { useSentence = true; ask(); } });
  $("cp-override").addEventListener("change", () => { showOverride(); ask(); });
  $("cp-pgen").addEventListener("input", showOverride);
  $("cp-pgen").addEventListener("change", ask);
  ask();
}
