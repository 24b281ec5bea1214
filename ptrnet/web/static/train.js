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

function drawTrainingCharts() {
  lineChart($("chart-loss"), [{ label: "training loss", color: COLORS[0], points: progress }], {
    title: "teacher-forced loss", xLabel: "step", yMin: 0,
  });
  lineChart($("chart-acc"), [
    { label: "accuracy", color: COLORS[0], points: evals.map((e) => [e.step, e.accuracy]) },
    { label: "valid outputs", color: COLORS[2], dash: "4 3", points: evals.map((e) => [e.step, e.valid_rate]) },
  ], { title: "validation instances, decoded", xLabel: "step", yMin: 0, yMax: 1 });
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

/** One series per (run, decoding): colour = run, dashes = decoded without the mask.
 * Labels: run number, task, trained with the mask ("mask") or without ("free"), then the decoding. */
function testSeries(metric) {
  return tests.flatMap((t, k) =>
    ["task", "none"].map((mode) => ({
      label: `#${t.run} ${t.task === "sort" ? "sort" : "hull"} ${t.masked_training ? "mask" : "free"}, dec. ${mode === "task" ? "masked" : "free"}`,
      color: COLORS[k % COLORS.length],
      dash: mode === "task" ? "" : "5 3",
      points: t.lengths.map((n, i) => [n, t.decoding[mode][metric][i]]),
    })),
  );
}

function drawTestCharts() {
  const options = { xLabel: "input length", yMin: 0, yMax: 1 };
  lineChart($("chart-gen-acc"), testSeries("accuracy"), { ...options, title: "accuracy per length" });
  lineChart($("chart-gen-invalid"), testSeries("invalid_rate"), { ...options, title: "invalid outputs per length" });
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
