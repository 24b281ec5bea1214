// Points from text: a paste (Ctrl+V anywhere outside a text field), a file dropped on the board,
// or the "Read points" box (typed or pasted text, or a chosen file). The page parses nothing: it
// sends the text, the file's name and the options to POST /api/read, which reads it with the
// command line's reader (ptrnet/web/reading.py), and hands the answer (points in the unit square
// and in the file's units, the map between them, the points' names) to `onRead`.

import { newestOnly } from "./api.js";

const postNewest = newestOnly(); // this panel's requests: only the newest answer is drawn

const $ = (id) => document.getElementById(id);
const EDITABLE = new Set(["INPUT", "TEXTAREA", "SELECT"]);

let options = null; // {task: () => name, limits, onRead}

export function setReadStatus(message) {
  showStatus(message);
}

function showStatus(message, failed = false) {
  $("read-status").textContent = message;
  $("read-status").classList.toggle("error", failed);
  $("read-status").classList.toggle("note", !failed);
  $("read-status").classList.toggle("hidden", !message);
}

/** What the page says about a read: the file, the count, names, what the board shows (the map
 * into the unit square; for cities their projection) and what lengths are measured in. */
function summary(answer) {
  const n = answer.points.length;
  const named = answer.names ? ", with their names" : "";
  const more = answer.instances > 1 ? ` (the first of ${answer.instances} instances)` : "";
  let text = `Read ${answer.name}: ${n} point${n === 1 ? "" : "s"}${named}${more}.`;
  if (answer.note) text += ` ${answer.note}.`;
  const map = answer.mapping ? `into the unit square by ${answer.mapping.text}` : "";
  if (answer.projected) {
    text += " The board shows their azimuthal equidistant projection about their centre, as" +
      ` the model reads them${map ? `, in km mapped ${map}` : ""}; a city moved or added there` +
      " takes the latitude and longitude of where it is put.";
  } else if (map) text += ` Mapped ${map}.`;
  if (answer.mapping || answer.distances) {
    text += ` Lengths are in ${answer.units || "the file's units"}, as ptrnet predict measures them.`;
  }
  return text;
}

/** Send `text` (a paste has no `name`) to the reader with the box's format and columns. */
async function read(text, name = null) {
  const body = { task: options.task(), text, format: $("read-format").value };
  if (name) body.name = name;
  const columns = $("read-columns").value.trim();
  if (columns) body.columns = columns;
  const size = new Blob([JSON.stringify(body)]).size;
  if (size > options.limits.max_body) {
    showStatus(`${name || "The pasted text"} is ${Math.ceil(size / 1024)} KB; the page reads up ` +
      `to ${Math.floor(options.limits.max_body / 1024)} KB (ptrnet predict reads larger files).`, true);
    return;
  }
  if (!text.trim()) return showStatus(`${name || "The pasted text"} is empty.`, true);
  try {
    const answer = await postNewest("/api/read", body);
    if (!answer) return; // overtaken by a later read
    showStatus(summary(answer));
    options.onRead(answer);
  } catch (err) {
    showStatus(err.message, true);
  }
}

async function readFile(file) {
  if (file.size > options.limits.max_body) {
    showStatus(`${file.name} is ${Math.ceil(file.size / 1024)} KB; the page reads files up to ` +
      `${Math.floor(options.limits.max_body / 1024)} KB (ptrnet predict reads larger ones).`, true);
    return;
  }
  await read(await file.text(), file.name);
}

/** A paste outside a text field reads the clipboard's file or text as points. */
function onPaste(event) {
  const target = event.target;
  if (EDITABLE.has(target.tagName) || target.isContentEditable) return;
  const data = event.clipboardData;
  if (!data) return;
  event.preventDefault();
  if (data.files && data.files.length) readFile(data.files[0]);
  else read(data.getData("text/plain"));
}

function onDrop(event) {
  event.preventDefault();
  $("board").classList.remove("drop-target");
  const data = event.dataTransfer;
  if (data.files && data.files.length) readFile(data.files[0]);
  else read(data.getData("text/plain"));
}

/** Wire the box, the paste and the drop. `task()` names the task shown; `limits` are those of
 * GET /api/tasks; `onRead(answer)` takes the answer of POST /api/read. */
export function initReading(settings) {
  options = settings;
  $("read-open").addEventListener("click", () => {
    const open = $("read-box").classList.toggle("hidden") === false;
    $("read-open").setAttribute("aria-expanded", String(open));
    if (open) $("read-text").focus();
  });
  $("read-go").addEventListener("click", () => read($("read-text").value));
  $("read-file").addEventListener("change", () => {
    const file = $("read-file").files[0];
    if (file) readFile(file);
    $("read-file").value = ""; // the same file again is a change
  });
  const board = $("board");
  board.addEventListener("dragover", (event) => {
    event.preventDefault();
    board.classList.add("drop-target");
  });
  board.addEventListener("dragleave", () => board.classList.remove("drop-target"));
  board.addEventListener("drop", onDrop);
  document.addEventListener("paste", onPaste);
}

/** Forget the last read's message (the points were replaced by other means). */
export function clearReadStatus() {
  showStatus("");
}
