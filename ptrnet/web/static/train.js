// Live training of a small Ptr-Net (sort or convex hull): start/cancel a run, stream its events
// (server-sent events), then test it on longer inputs and compare runs per length.

import { post } from "./api.js";
import { lineChart } from "./chart.js";

const $ = (id) => document.getElementById(id);
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

let source = null; // the EventSource of the current run
let progress = []; // [step, loss]
let evals = []; // {step, accuracy, valid_rate}
let run = null; // {number, masked}
let runCount = 0;
const tests = []; // answers of POST /api/train/test, each with its run
// Per task: the settings the page proposes (GET /api/lesson's train_defaults, LIVE_DEFAULTS in
// ptrnet/web/live_train.py, measured by benchmarks/bench_live_train.py) -> input ids.
const FIELDS = {
  hidden: "tr-hidden", steps: "tr-steps", batch_size: "tr-batch", min_len: "tr-min", max_len: "tr-max",
  lr: "tr-lr",
};
let defaults = {};

function trainRequest() {
  const value = (id) => Number($(id).value);
  return {
    task: $("tr-task").value,
    hidden: value("tr-hidden"),
    steps: value("tr-steps"),
    batch_size: value("tr-batch"),
    min_len: value("tr-min"),
    max_len: value("tr-max"),
    lr: value("tr-lr"),
    masked: $("tr-masked").checked,
  };
}

function setRunning(running) {
  $("tr-start").disabled = running;
  $("tr-cancel").disabled = !running;
  $("te-run").disabled = running || run === null;
}

async function startTraining() {
  const body = trainRequest();
  try {
    await post("/api/lesson/train", body);
  } catch (err) {
    $("tr-status").textContent = `Could not start: ${err.message}`;
    return;
  }
  runCount += 1;
  run = { number: runCount, masked: body.masked, task: body.task };
  progress = [];
  evals = [];
  setRunning(true);
  $("tr-status").textContent = `Run #${run.number} (${body.task}) started.`;
  source = new EventSource("/api/train/events");
  source.onmessage = (message) => handleEvent(JSON.parse(message.data));
}

function handleEvent(event) {
  if (event.type === "progress") {
    progress.push([event.step, event.loss]);
    $("tr-status").textContent =
      `Run #${run.number}: step ${event.step}, loss ${event.loss.toFixed(4)}, ${event.elapsed_s} s`;
  } else if (event.type === "eval") {
    evals.push(event);
  } else if (event.type === "end") {
    source.close();
    setRunning(false);
    const last = evals[evals.length - 1];
    const score = last ? `, validation accuracy ${(100 * last.accuracy).toFixed(1)}%` : "";
    const why = event.message ? ` (${event.message})` : "";
    $("tr-status").textContent = `Run #${run.number} ${event.status}${why}${score}.`;
  }
  drawTrainingCharts();
}

const VALID_RULE = "a permutation of the inputs for sorting; a closed polygon without repeats for a hull";

function drawTrainingCharts() {
  lineChart($("chart-loss"), [{
    label: "training loss (cross-entropy of the exact answer, teacher-forced)",
    about: "At every step of a training batch the model is given the exact answer's previous " +
      "pointers and scored on the probability it gives the next one; lower is better.",
    color: COLORS[0],
    points: progress,
  }], { title: "Training: loss per step", xLabel: "training step", yLabel: "loss", yMin: 0 });
  const masked = run && run.masked ? "with the mask" : "without the mask";
  lineChart($("chart-acc"), [
    {
      label: "right answers: share of validation instances solved exactly",
      about: `200 fixed instances of the training lengths, decoded greedily ${masked} ` +
        "(as in training); right = the whole output equals the exact answer.",
      color: COLORS[0],
      points: evals.map((e) => [e.step, e.accuracy]),
    },
    {
      label: "valid outputs: share that obey the task's rule",
      about: `The same decodings; valid = ${VALID_RULE}.`,
      color: COLORS[2],
      dash: "4 3",
      points: evals.map((e) => [e.step, e.valid_rate]),
    },
  ], { title: "Training: validation, decoded", xLabel: "training step", yLabel: "share of instances", yMin: 0, yMax: 1, yPercent: true });
}

async function runTest() {
  const lengths = $("te-lengths").value.split(/[\s,;]+/).filter(Boolean).map(Number);
  $("te-status").textContent = "Testing…";
  try {
    const result = await post("/api/train/test", { lengths, count: Number($("te-count").value) });
    tests.push({ ...result, run: run.number });
    $("te-status").textContent =
      `Run #${run.number} (trained on ${result.trained_on}) tested on ${result.lengths.join(", ")}.`;
  } catch (err) {
    $("te-status").textContent = `Test failed: ${err.message}`;
  }
  drawTestCharts();
}

// How a test decodes: with the task's mask, or without it (the paper's unconstrained decoding).
const DECODINGS = {
  task: { dash: "", says: "decoded with the mask",
    about: "With the mask: at each step only the inputs the task allows may be chosen (no " +
      "input twice, no end before the answer is complete)." },
  none: { dash: "5 3", says: "decoded without the mask (unconstrained)",
    about: "Unconstrained decoding: at each step the pointer may choose any input, one " +
      "already chosen included, or the end symbol. A run trained with the mask was never " +
      "taught to avoid those choices (the mask removed them), so decoded this way nearly all " +
      "its outputs are invalid, even at the training lengths." },
};

/** One series per (run, decoding): colour = run, dashes = decoded without the mask; the label
 * says the run (number, task, whether the mask was in training) and the decoding. */
function testSeries(metric) {
  return tests.flatMap((t, k) =>
    Object.entries(DECODINGS).map(([mode, decoding]) => ({
      label: `run #${t.run} (${t.task.replaceAll("_", " ")}, ${t.masked_training ? "mask in training" : "no mask in training"}), ${decoding.says}`,
      about: decoding.about,
      color: COLORS[k % COLORS.length],
      dash: decoding.dash,
      points: t.lengths.map((n, i) => [n, t.decoding[mode][metric][i]]),
    })),
  );
}

function drawTestCharts() {
  const options = { xLabel: "input length (fresh test instances)", yLabel: "share of instances", yMin: 0, yMax: 1, yPercent: true };
  lineChart($("chart-gen-acc"), testSeries("accuracy"), { ...options, title: "Test: right answers per length" });
  lineChart($("chart-gen-invalid"), testSeries("invalid_rate"), { ...options, title: "Test: invalid outputs per length" });
}

function switchTask() {
  const proposed = defaults[$("tr-task").value];
  if (!proposed) return;
  for (const [field, id] of Object.entries(FIELDS)) $(id).value = proposed[field];
  $("te-lengths").value = proposed.test_lengths.join(" ");
}

/** Start the panel; `trainDefaults` maps a task to its proposed settings and test lengths. */
export function initTraining(trainDefaults) {
  defaults = trainDefaults || {};
  $("tr-task").addEventListener("change", switchTask);
  $("tr-start").addEventListener("click", startTraining);
  $("tr-cancel").addEventListener("click", () => post("/api/train/cancel").catch(() => {}));
  $("te-run").addEventListener("click", runTest);
  $("te-clear").addEventListener("click", () => { tests.length = 0; drawTestCharts(); });
  switchTask();
  drawTrainingCharts();
  drawTestCharts();
}
