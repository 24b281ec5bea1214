// The lesson panels and classroom mode: asks GET /api/lesson which lesson models are installed,
// then starts each panel (a panel without its model says so) and the live-training panel with
// the settings the server proposes.

import { initClassroom } from "./classroom.js";
import { initCopy } from "./copy.js";
import { initInduction } from "./induction.js";
import { initSpan } from "./span.js";
import { initTraining } from "./train.js";
import { initVocabulary } from "./vocab.js";

async function start() {
  initClassroom();
  const response = await fetch("/api/lesson");
  const info = await response.json();
  initVocabulary(info);
  initCopy(info);
  initInduction(info);
  initSpan(info);
  initTraining(info.train_defaults);
  document.body.dataset.lessonReady = "true"; // every panel is wired (the browser tests wait)
}

start();
