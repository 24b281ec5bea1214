// Mixing versus pointing, at the decoding step shown on the board.
// Ordinary attention mixes: its output is the attention-weighted average of what it attends to,
// a place between the inputs. A pointer points: its output is one of the inputs. Both use the
// same weights here, the model's pointer distribution at this step (end symbol left out).

import { add, toPx } from "./board.js";

/** The weighted average of `points` (n rows of numbers) under `weights`, renormalised over the
 * inputs; null when the inputs carry no weight (all of it on the end symbol). */
export function weightedAverage(points, weights) {
  const total = weights.reduce((a, b) => a + b, 0);
  if (!(total > 0)) return null;
  return points[0].map((_, d) => points.reduce((acc, p, j) => acc + weights[j] * p[d], 0) / total);
}

const fmt = (v) => v.toFixed(3);

/** Draw the average (a diamond, spokes to the inputs it mixes) on the plane; describe both.
 * Returns the sentence for the side panel ("" when no step is shown). */
export function drawMixing(svg, view, marks) {
  if (!marks || !view.points.length) return "";
  const average = weightedAverage(view.points, marks.prob);
  const endShare = `${(100 * marks.endProb).toFixed(1)}%`;
  if (average === null) return `All the weight is on the end symbol: there is nothing to mix.`;
  const pick = marks.current < 0 ? "the end symbol ⇐" : `input ${marks.current + 1}`;
  if (view.drawing === "bars") { // numbers, not points: no place on the board to mark
    const chosen = marks.current < 0 ? "" : ` = ${view.points[marks.current][0]}`;
    return `Mixing: the attention-weighted average of the numbers is ${fmt(average[0])}, ` +
      `a value between the inputs. Pointing: ${pick}${chosen}. (End symbol's ${endShare} left out.)`;
  }
  const g = add(svg, "g", { class: "mixing" });
  const [ax, ay] = toPx(average);
  marks.prob.forEach((p, j) => {
    if (p < 0.05) return;
    const [x, y] = toPx(view.points[j]);
    add(g, "line", { x1: ax, y1: ay, x2: x, y2: y, class: "mix-spoke", "stroke-width": 1 + 4 * p });
  });
  const r = 9;
  add(g, "path", {
    d: `M${ax},${ay - r} L${ax + r},${ay} L${ax},${ay + r} L${ax - r},${ay} Z`,
    class: "mix",
    "data-x": average[0],
    "data-y": average[1],
  });
  const where = Math.max(...marks.prob) > 0.95
    ? "nearly on one input: the pointer is almost sure here, so mixing and pointing agree; at " +
      "an uncertain step the average falls between the inputs"
    : "a place between the inputs, not one of them";
  return `Mixing (◆): the attention-weighted average of the points is (${fmt(average[0])}, ` +
    `${fmt(average[1])}), ${where}. Pointing: the pointer names ${pick}. ` +
    `(End symbol's ${endShare} left out of the average.)`;
}
