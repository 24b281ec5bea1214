// The lesson panels and classroom mode: asks GET /api/lesson which lesson models are installed,
// then starts each panel (a panel without its model says so).

import { initClassroom } from "./classroom.js";
import { initCopy } from "./copy.js";
import { initVocabulary } from "./vocab.js";

async function start() {
  initClassroom();
  const response = await fetch("/api/lesson");
  const info = await response.json();
  initVocabulary(info);
  initCopy(info);
}

start();
