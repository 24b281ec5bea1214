// Lesson panel "point at the answer" (POST /api/lesson/span): the bundled span pointer on one
// passage and question, drawn from the span task's test stream (names never seen in training)
// or typed. Each passage token is shaded by the model's start probability (top half, blue) and
// its end probability given the chosen start (bottom half, orange); the predicted span is
// outlined, and words outside the model's vocabulary are dashed.

import { newestOnly } from "./api.js";

const postNewest = newestOnly(); // this panel's requests: only the newest answer is drawn

const $ = (id) => document.getElementById(id);
const START = "31, 119, 180"; // rgb of --model, the start distribution's shade
const END = "255, 127, 14"; // rgb of --pick, the end distribution's shade
let seed = 0;

const percent = (p) => `${(100 * p).toFixed(1)}%`;

function drawPassage(answer) {
  const box = $("sp-passage-words");
  box.replaceChildren();
  answer.passage.forEach((word, i) => {
    const span = document.createElement("span");
    span.className = "word sp-token";
    span.textContent = word;
    const s = answer.start_probs[i];
    const e = answer.end_probs[i];
    span.style.background = `linear-gradient(rgba(${START}, ${s}) 50%, rgba(${END}, ${e}) 50%)`;
    span.title = `${i}: ${word} — start ${percent(s)}, end ${percent(e)}`;
    if (answer.unknown[i]) span.classList.add("oov");
    if (i >= answer.start && i <= answer.end) span.classList.add("sp-pick");
    box.appendChild(span);
  });
}

function draw(answer) {
  drawPassage(answer);
  $("sp-question-words").textContent = `Question: ${answer.question.join(" ")}`;
  const gold = answer.gold === null ? "" : answer.gold === answer.answer
    ? ` The generator's answer is the same: right.` : ` The generator's answer: “${answer.gold}”.`;
  $("sp-status").textContent = `Answer: “${answer.answer}” (tokens ${answer.start}–` +
    `${answer.end}; start ${percent(answer.start_probs[answer.start])}, end ` +
    `${percent(answer.end_probs[answer.end])} given that start).${gold}`;
}

async function ask(body) {
  try {
    const answer = await postNewest("/api/lesson/span", body);
    if (!answer) return; // overtaken by a later request
    if (!answer.typed) {
      $("sp-passage").value = answer.passage.join(" ");
      $("sp-question").value = answer.question.join(" ");
    }
    draw(answer);
  } catch (err) {
    $("sp-status").textContent = `Could not run the model: ${err.message}`;
  }
}

function typed() {
  const passage = $("sp-passage").value.trim();
  const question = $("sp-question").value.trim();
  if (!passage || !question) {
    $("sp-status").textContent = "Type a passage and a question.";
    return;
  }
  ask({ passage, question });
}

export function initSpan(info) {
  if (!info.span) {
    $("sp-missing").textContent = info.span_missing;
    $("sp-missing").classList.remove("hidden");
    for (const id of ["sp-random", "sp-run", "sp-passage", "sp-question"]) $(id).disabled = true;
    return;
  }
  const model = info.span;
  $("sp-about").textContent = `Model: a span pointer (word vectors of ${model.embed}, LSTMs ` +
    `of ${model.hidden} units per direction, ${model.parameters.toLocaleString("en")} ` +
    `parameters, ${model.vocabulary.toLocaleString("en")} words) trained ${model.step} steps. ` +
    `Blue (top half): P(start); orange (bottom half): P(end | start).`;
  $("sp-random").addEventListener("click", () => { seed += 1; ask({ seed }); });
  $("sp-run").addEventListener("click", typed);
  // The question is one line: Enter answers. The passage box takes lines: Ctrl+Enter answers.
  $("sp-question").addEventListener("keydown", (e) => { if (e.key === "Enter") typed(); });
  $("sp-passage").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) typed();
  });
  ask({ seed });
}
