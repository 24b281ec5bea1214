// Classroom mode: large text for a projector, the exact answer hidden, explanations on or off.
// Each toggle sets a class on <body>; style.css does the rest.

const $ = (id) => document.getElementById(id);
const TOGGLES = { "cl-large": "large", "cl-hide": "hide-answer" };

export function initClassroom() {
  for (const [id, cls] of Object.entries(TOGGLES)) {
    const sync = () => document.body.classList.toggle(cls, $(id).checked);
    $(id).addEventListener("change", sync);
    sync();
  }
  const explain = () => document.body.classList.toggle("no-explain", !$("cl-explain").checked);
  $("cl-explain").addEventListener("change", explain);
  explain();
}
