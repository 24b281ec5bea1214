// The playground: edit an instance, ask the server for the exact and the model's answer,
// show metrics, and step through the decoding one pointer at a time.

import { addedRow, fromPx, percent, render, SIZE } from "./board.js";
import { unproject } from "./geo.js";
import { metricRows } from "./metrics.js";
import { drawMixing } from "./mixing.js";
import { clearReadStatus, initReading, setReadStatus } from "./reading.js";

const $ = (id) => document.getElementById(id);
const DEBOUNCE_MS = 150;

const state = {
  tasks: {}, // name -> entry of GET /api/tasks
  strategies: {}, // name -> decoding strategy of GET /api/tasks (name, title, width_option)
  limits: {},
  task: null, // the name of the task shown (the #task select's value)
  points: [], // [[x, y]] in the unit square, or [[v]] for a task of numbers (dim 1)
  names: null, // the points' names (read from a file's name column; "" for a point added), or null
  file: null, // the file the points were read from (POST /api/read), or null: see fromFile
  result: null, // last answer of POST /api/predict
  step: null, // decoding step shown; null = the whole output
};

/** The shown task's entry of GET /api/tasks (name, dim, drawing, min_n, model, ...). */
const entry = () => state.tasks[state.task];
/** Whether the task's inputs are numbers typed as a list (dim 1), not points on the board. */
const numbers = () => entry().dim === 1;

// ---- server ---------------------------------------------------------------------------------

let timer = null;
let busy = false; // a request is in flight
let again = false; // the instance changed while it was

/** Ask for a prediction DEBOUNCE_MS after the last change. One request at a time: changes made
 * while one is in flight are sent when it returns, so the server never queues stale work. */
function schedulePredict() {
  clearTimeout(timer);
  timer = setTimeout(predict, DEBOUNCE_MS);
}

/** The strategy chosen and its width (rows per instance), sent as the field its entry names. */
function decodingOptions() {
  const strategy = state.strategies[$("strategy").value];
  const options = { strategy: strategy.name };
  if (strategy.width_option) options[strategy.width_option] = Number($("beam-width").value);
  if ($("constraints").value) options.constraints = $("constraints").value;
  return entry().searches.length ? { ...options, ...searchOptions() } : options;
}

/** The task's searches after decoding of one kind (GET /api/tasks: "rebuild" or "local"). */
const searchesOf = (kind) => entry().searches.filter((s) => s.kind === kind);

/** The searches the Search controls ask for: rounds of the task's rebuild search (0 = none),
 * then the local search chosen (tsp: 2-opt, or 2-opt and Or-opt). Rounds out of range go to the
 * server as typed: its 422 says what is wrong. */
function searchOptions() {
  const rounds = Number($("rrc-rounds").value);
  const [rebuild] = searchesOf("rebuild");
  const options = rounds && rebuild ? { improve: rebuild.name, iterations: rounds } : {};
  if ($("search").value) options[$("search").value] = true; // a local search's field
  return options;
}

/** The Search controls for the shown task: hidden without a search, its local searches listed
 * (a choice kept where the task offers it too), the rounds box only with a rebuild search. */
function showSearchControls() {
  const local = searchesOf("local");
  const chosen = $("search").value;
  const none = new Option("none", "");
  $("search").replaceChildren(none, ...local.map((s) => new Option(s.words, s.name)));
  $("search").value = local.some((s) => s.name === chosen) ? chosen : "";
  $("search-label").classList.toggle("hidden", !local.length);
  $("rrc-label").classList.toggle("hidden", !searchesOf("rebuild").length);
  $("search-controls").classList.toggle("hidden", !entry().searches.length);
}

async function predict() {
  if (busy) {
    again = true;
    return;
  }
  busy = true;
  try {
    await fetchAnswer();
  } finally {
    busy = false;
  }
  if (again) {
    again = false;
    predict();
  }
}

async function fetchAnswer() {
  const task = entry();
  if (state.points.length < task.min_n) {
    state.result = null;
    showError(`Add at least ${task.min_n} points.`);
    return redraw();
  }
  const sent = requestPoints(task);
  const body = { task: state.task, ...sent, decoding: decodingOptions() };
  // Knapsack: the capacity box's text ("12.5", "30%"), which the server parses as --capacity
  // does (its 422 names a bad one); empty = default.
  const capacity = $("capacity").value.trim();
  if (task.capacity && capacity !== "") body.capacity = capacity;
  // The unit of the answer's lengths: its distance rule's (km), else the points' own.
  const ownUnits = sent.points !== state.points && state.file.frame ? "(file's units)" : null;
  try {
    const response = await fetch("/api/predict", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const data = await response.json();
    // The task changed while this was in flight: drop the answer (a request for the new task
    // is queued behind this one), or the old task's shapes would be drawn as the new task's.
    if (body.task !== state.task) return;
    if (!response.ok) throw new Error(data.detail || response.statusText);
    state.result = { ...data, lengthUnit: data.units || ownUnits };
    state.step = null;
    showError(null);
  } catch (err) {
    state.result = null;
    showError(err.message);
  }
  redraw();
}

/** The points as the server is to measure them: a file's own coordinates and length rule (read
 * by POST /api/read, sent back as ptrnet predict reads the file: cities in degrees, great-circle
 * km), else the board's unit square. A projected file (cities) under a task that takes no
 * length rule sends the board's points, the projection the model would read. */
function requestPoints(task) {
  const file = state.file;
  const rule = file && file.distances && task.distances ? file.distances : null;
  if (!file || (file.projected && !rule)) return { points: state.points };
  return rule ? { points: file.coords, distances: rule } : { points: file.coords };
}

function showError(message) {
  $("error").textContent = message || "";
  $("error").classList.toggle("hidden", !message);
}

// ---- drawing --------------------------------------------------------------------------------

function redraw() {
  const view = { ...state, drawing: entry().drawing };
  const marks = render($("board"), view);
  const mixing = $("show-mixing").checked ? drawMixing($("board"), view, marks) : "";
  $("mixing-info").textContent = mixing;
  showMetrics();
  showStepper(marks);
  const searched = Boolean(state.result && state.result.model && state.result.model.search);
  $("legend-decoded").classList.toggle("hidden", !searched);
}

function showMetrics() {
  const table = $("metrics");
  table.replaceChildren();
  for (const [name, value, cls] of metricRows(entry(), state.points, state.result)) {
    const row = table.insertRow();
    row.insertCell().textContent = name;
    const cell = row.insertCell();
    cell.textContent = value;
    if (cls) cell.className = cls;
  }
  const answered = state.result && state.result.model && state.result.model.info;
  const model = answered || entry().model; // the model that answered, if routed by n
  $("model-status").textContent = model
    ? `Model: ${model.kind}, hidden ${model.hidden}, trained on n = ${model.trained_sizes} (${model.name})` +
      (model.window ? `, through a local window of ${model.window} cities` : "")
    : `No model loaded for ${state.task}: showing the exact solution only.`;
}

function showStepper(marks) {
  const model = state.result && state.result.model;
  const trace = model && model.trace;
  $("stepper").classList.toggle("hidden", !trace);
  // Why there is no step-through (a searched tour, over 100 points): the server's message.
  $("no-step").textContent = model && !trace ? state.result.message || "" : "";
  $("no-step").classList.toggle("hidden", !$("no-step").textContent);
  if (!trace) return;
  const total = trace.tokens.length;
  const step = state.step === null ? total : state.step;
  $("step-slider").max = total;
  $("step-slider").value = step;
  if (!marks) {
    $("step-info").textContent = `Whole output: ${total} pointers, the last one to the end symbol ⇐.`;
    $("end-prob").textContent = "";
    return;
  }
  const chose = marks.current < 0 ? "the end symbol ⇐" : pointLabel(marks.current);
  const p = trace.probs[step][trace.tokens[step]];
  $("step-info").textContent =
    `Step ${step + 1} of ${total}: the pointer chose ${chose} (p = ${percent(p)}). ` +
    "Halo = probability; grey = masked; ringed = chosen before.";
  const masked = marks.endAllowed ? "" : " (masked)";
  $("end-prob").textContent = `⇐ end symbol: ${percent(marks.endProb)}${masked}`;
  $("end-prob").classList.toggle("current", marks.current < 0);
}

function setStep(step) {
  const trace = state.result && state.result.model && state.result.model.trace;
  if (!trace) return;
  const total = trace.tokens.length;
  const clamped = Math.max(0, Math.min(total, step));
  state.step = clamped >= total ? null : clamped;
  redraw();
}

const currentStep = () => {
  const trace = state.result.model.trace;
  return state.step === null ? trace.tokens.length : state.step;
};

/** "input 3", and its name where the points were read with names: "input 3 (Lyon)". */
function pointLabel(i) {
  const name = state.names && state.names[i];
  return name ? `input ${i + 1} (${name})` : `input ${i + 1}`;
}

// ---- editing --------------------------------------------------------------------------------

function svgPoint(event) {
  const box = $("board").getBoundingClientRect();
  return [((event.clientX - box.left) * SIZE) / box.width, ((event.clientY - box.top) * SIZE) / box.height];
}

let dragging = null; // index of the point being dragged

function onPointerDown(event) {
  if (numbers() || event.button !== 0) return;
  const index = event.target.dataset.index;
  if (index !== undefined) {
    dragging = Number(index);
    $("board").setPointerCapture(event.pointerId);
  } else if (state.points.length < state.limits.max_points) {
    if (state.names) state.names.push("");
    place(state.points.length, fromPx(...svgPoint(event)));
    changed();
  }
}

function onPointerMove(event) {
  if (dragging === null) return;
  place(dragging, fromPx(...svgPoint(event)));
  changed();
}

/** Put point `i` (an added one: i = the count) at `unit` on the board, and in the file's units
 * through the file's map: for cities on a projection, through its inverse (geo.js), so their
 * latitude and longitude follow the drag. Only a place past the antipode of the cities' centre,
 * which is no place on the globe, takes the points out of the file and its rule (the status
 * says so). A point of more than two numbers keeps its others when moved; an added one takes
 * board.js's addedRow (the last point's, or a depot's and a customer's on a board that holds
 * one point at most). */
function place(i, unit) {
  const points = state.points;
  points[i] = i < points.length ? [...unit, ...points[i].slice(2)] : addedRow(unit, points, entry());
  const file = state.file;
  if (!file) return;
  if (file.projected) {
    const coords = file.projection && unproject(unit, file.frame, file.projection);
    if (coords) {
      file.coords[i] = [...coords, ...points[i].slice(unit.length)]; // a customer's demand kept
      return;
    }
    state.file = null;
    setReadStatus("A point moved past the antipode of the cities' centre, where the " +
      "projection has no place on the globe: the points are in the unit square now, lengths " +
      "straight lines in it. Read the file again for its own lengths.");
    return;
  }
  const { frame } = file;
  const xy = frame ? unit.map((v, k) => v * frame.scale + frame.offset[k]) : unit;
  file.coords[i] = [...xy, ...points[i].slice(unit.length)]; // a routing row's demand kept
}

function onContextMenu(event) {
  const index = event.target.dataset.index;
  if (numbers() || index === undefined) return;
  event.preventDefault();
  state.points.splice(Number(index), 1);
  if (state.names) state.names.splice(Number(index), 1);
  if (state.file) state.file.coords.splice(Number(index), 1);
  changed();
}

function changed() {
  state.step = null;
  redraw();
  schedulePredict();
}

function randomise() {
  const limit = state.limits.max_points || 300;
  const count = Math.max(1, Math.min(limit, Number($("random-count").value) || 10));
  const round = (v) => Math.round(v * 1000) / 1000;
  if (numbers()) {
    $("numbers").value = Array.from({ length: count }, () => round(Math.random())).join(" ");
    return readNumbers();
  }
  if (wide()) return sample(Math.min(count, limit - 1));
  setPoints(Array.from({ length: count }, () => [round(Math.random()), round(Math.random())]));
}

/** Whether a point of the task carries more than x and y (a customer's demand and the
 * vehicles' capacity): its random instances come from the task's own generator. */
const wide = () => entry().dim > 2;

/** A fresh instance of n of the task's sizes from POST /api/sample (its 422 shown). */
async function sample(n) {
  const task = state.task;
  const seed = Math.floor(Math.random() * 2 ** 32);
  try {
    const response = await fetch("/api/sample", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ task, n, seed }),
    });
    const data = await response.json();
    if (!response.ok) throw new Error(data.detail || response.statusText);
    if (task === state.task) setPoints(data.points);
  } catch (err) {
    showError(err.message);
  }
}

/** Replace the points; `names` and `file` as read from a file (POST /api/read), else none. */
function setPoints(points, names = null, file = null) {
  state.points = points;
  state.names = names;
  state.file = file;
  if (!names && !file) clearReadStatus();
  changed();
}

/** The file behind an answer of POST /api/read: `coords`, each point in the file's units (what
 * the server measures; a point placed on the board goes through `frame`, the file's map into the
 * unit square, or null), `distances` (the file's length rule, or null), `projected` (the board
 * shows the cities' projection, not their coordinates) and `projection` (how to invert it:
 * centre, radius and the file's form of a place; geo.js). */
const fromFile = (answer) => ({
  coords: answer.points.map((p) => [...p]),
  frame: answer.mapping,
  distances: answer.distances,
  projected: answer.projected,
  projection: answer.projection,
});

/** An answer of POST /api/read: the file's points in the unit square with their names, or for a
 * task of numbers the numbers as the file gives them, into the list box. */
function usePoints(answer) {
  if (numbers()) {
    $("numbers").value = answer.points.map((p) => p[0]).join(" ");
    return readNumbers();
  }
  setPoints(answer.unit, answer.names ? [...answer.names] : null, fromFile(answer));
}

function readNumbers() {
  const values = $("numbers").value.split(/[\s,;]+/).filter(Boolean).map(Number);
  if (values.some((v) => !Number.isFinite(v))) return showError("Numbers only, please.");
  Object.assign(state, { points: values.map((v) => [v]), names: null, file: null });
  changed();
}

function switchTask() {
  state.task = $("task").value;
  state.result = null;
  const list = numbers();
  $("sort-controls").classList.toggle("hidden", !list);
  showSearchControls();
  $("capacity-label").classList.toggle("hidden", !entry().capacity);
  $("board-hint").classList.toggle("hidden", list);
  $("clear").disabled = list;
  $("count-unit").textContent = list ? "numbers" : "points";
  $("random-count").title = list ? "how many random numbers" : "how many random points";
  $("randomise").title = list
    ? "replace the list by random numbers in [0, 1), as many as the box says"
    : "replace the points by random points in the unit square, as many as the box says";
  $("clear").title = list ? "remove every point (not for a list of numbers)" : "remove every point";
  if (list) readNumbers();
  else {
    if (state.points.length && state.points[0].length !== entry().dim) {
      Object.assign(state, { points: [], names: null, file: null });
    }
    if (!state.points.length) return randomise();
    changed();
  }
}

// ---- start ----------------------------------------------------------------------------------

async function start() {
  const response = await fetch("/api/tasks");
  const data = await response.json();
  state.limits = data.limits;
  for (const strategy of data.strategies) {
    state.strategies[strategy.name] = strategy;
    const option = new Option(strategy.title, strategy.name);
    option.title = strategy.description;
    $("strategy").add(option);
  }
  for (const task of data.tasks) {
    state.tasks[task.name] = task;
    if (![...$("task").options].some((o) => o.value === task.name)) {
      $("task").add(new Option(task.name.replaceAll("_", " "), task.name)); // a task the page has no title for
    }
  }
  const board = $("board");
  board.addEventListener("pointerdown", onPointerDown);
  board.addEventListener("pointermove", onPointerMove);
  board.addEventListener("pointerup", () => (dragging = null));
  board.addEventListener("contextmenu", onContextMenu);
  $("task").addEventListener("change", switchTask);
  $("rrc-rounds").max = state.limits.max_rrc_iterations;
  for (const id of ["strategy", "beam-width", "constraints", "search", "rrc-rounds", "capacity"]) {
    $(id).addEventListener("change", schedulePredict);
  }
  const widthless = () => !state.strategies[$("strategy").value].width_option;
  $("strategy").addEventListener("change", () => $("beam-label").classList.toggle("hidden", widthless()));
  $("beam-label").classList.add("hidden");
  $("clear").addEventListener("click", () => setPoints([]));
  $("randomise").addEventListener("click", randomise);
  $("numbers").addEventListener("input", readNumbers);
  $("step-first").addEventListener("click", () => setStep(0));
  $("step-prev").addEventListener("click", () => setStep(currentStep() - 1));
  $("step-next").addEventListener("click", () => setStep(currentStep() + 1));
  $("step-last").addEventListener("click", () => setStep(Infinity));
  $("step-slider").addEventListener("input", (e) => setStep(Number(e.target.value)));
  $("show-mixing").addEventListener("change", redraw);
  initReading({ task: () => state.task, limits: state.limits, onRead: usePoints });
  switchTask();
}

start();
