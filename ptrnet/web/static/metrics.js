// Metric rows for the side panel: [name, value, css class] per drawing kind, from a predict answer.

const yes = (ok) => [ok ? "yes" : "no", ok ? "good" : "bad"];
const pct = (v) => (v === null || v === undefined ? "—" : `${(100 * v).toFixed(1)}%`);
const num = (v) => (v === null || v === undefined ? "—" : v.toFixed(3));
/** A length the server measured, with its unit (`lengthUnit` of the answer: "km" under a file's
 * rule, "(file's units)", or none for the unit square). */
const length = (v, unit) => (v === null || v === undefined || !unit ? num(v) : `${num(v)} ${unit}`);

// What the reference's length is called: optimal only where the server's solver is exact
// (`reference_exact` of the answer); beyond that a heuristic's, which a model may beat.
const referenceName = (exact) => (exact ? "optimal" : "reference (heuristic)");

/** Facts about the exact answer alone (no model loaded), by drawing kind. */
function exactRows(drawing, points, result) {
  const { reference: ref, reference_exact: exact } = result;
  const rows = [["points", String(points.length)]];
  if (drawing === "hull") rows.push(["hull vertices", String(ref.length - 1)]);
  if (drawing === "tour") {
    rows.push([`${referenceName(exact)} tour length`, length(result.reference_cost, result.lengthUnit)]);
  }
  if (drawing === "triangles") rows.push(["triangles", String(ref.length / 3)]);
  if (drawing === "subset") rows.push(["inputs chosen", String(ref.length)]);
  if (drawing === "routes") {
    rows.push(["routes", String(routeCount(ref))]);
    rows.push([`${referenceName(exact)} length`, length(result.reference_cost, result.lengthUnit)]);
  }
  if (drawing === "bars") rows.push(["smallest, largest", `${points[ref[0]][0]}, ${points[ref[ref.length - 1]][0]}`]);
  return rows;
}

/** Routes in a sequence whose routes are separated by the depot (index 0). */
const routeCount = (seq) => seq.filter((i, k) => i !== 0 && (k === 0 || seq[k - 1] === 0)).length;

// The metrics of POST /api/predict worth a row, per drawing kind (Task.metric_keys and "valid").
const ROWS = {
  hull: (m) => [
    ["hull correct?", ...yes(m.accuracy === 1)],
    ["area coverage", m.non_simple_rate === 0 ? pct(m.area_coverage) : "not a simple polygon",
      m.non_simple_rate === 0 ? "" : "bad"],
    ["closed polygon, no repeats", ...yes(m.valid)],
  ],
  tour: (m, result) => {
    const { search, decoded_cost: own } = result.model; // own: before the search, if any
    const unit = result.lengthUnit;
    return [
      ["valid tour?", ...yes(m.valid)],
      [search ? "searched tour length" : "tour length", length(m.mean_length, unit)],
      ...(search ? [["model's own tour length", length(own, unit)]] : []),
      [`${referenceName(result.reference_exact)} length`, length(m.reference_cost, unit)],
      [result.reference_exact ? "gap to optimal" : "gap to reference (< 0: shorter)", pct(m.mean_gap)],
    ];
  },
  triangles: (m, result) => [
    ["exact triangulation?", ...yes(m.accuracy === 1)],
    ["triangle coverage", pct(m.triangle_coverage)],
    ["triangles, model / exact",
      `${Math.floor(result.model.sequence.length / 3)} / ${result.reference.length / 3}`],
  ],
  routes: (m, result) => [
    ["valid routes?", ...yes(m.valid)],
    ["length", length(m.mean_length, result.lengthUnit)],
    [`${referenceName(result.reference_exact)} length`, length(m.reference_cost, result.lengthUnit)],
    [result.reference_exact ? "gap to optimal" : "gap to reference (< 0: shorter)", pct(m.mean_gap)],
    ["routes, model / reference", `${routeCount(result.model.sequence)} / ${routeCount(result.reference)}`],
  ],
  bars: (m) => [
    ["sorted correctly?", ...yes(m.exact_match === 1)],
    ["positions right", pct(m.position_accuracy)],
    ["valid permutation?", ...yes(m.valid)],
  ],
};

/** Every metric as it comes, for a drawing kind without rows of its own. */
const allMetrics = (m) =>
  Object.entries(m).map(([key, v]) => [key, typeof v === "boolean" ? yes(v)[0] : num(v)]);

/** The capacity an answer was solved under (knapsack: `capacity`, in the items' units), with
 * what was asked (`capacity_given`: "30%", a number) or the default; none for other tasks. */
function capacityRows(result) {
  if (result.capacity === null || result.capacity === undefined) return [];
  const given = result.capacity_given;
  const value = String(Number(result.capacity.toPrecision(6)));
  const how = given === null || given === undefined ? "default min(n/4, 25)"
    : String(given).includes("%") ? `${String(given).trim()} of the total weight` : "";
  return [["capacity", how ? `${value} (${how})` : value]];
}

/** Rows for the metrics table of `task` (its GET /api/tasks entry); empty without an answer. */
export function metricRows(task, points, result) {
  if (!result || result.task !== task.name) return [];
  if (!result.model) return [...capacityRows(result), ...exactRows(task.drawing, points, result)];
  const m = result.model;
  const decoding = m.decoding || m.strategy; // the strategy's card in words, from the server
  const likelihood = m.log_prob === null ? "—" : m.log_prob.toFixed(2);
  return [
    ...capacityRows(result),
    ...(ROWS[task.drawing] || allMetrics)(result.metrics, result, points),
    ["decoding", `${decoding}, mask ${m.constraints === "task" ? "on" : "off"}`],
    // A searched tour is not the model's output: it has no log-likelihood.
    m.search ? ["searched", m.search.words] : ["log-likelihood", likelihood],
  ];
}
