// /score: photograph a winning hand, correct what was misread, score it. The photo is shown from the phone's own
// memory (an object URL) and sent once to be read; the server keeps nothing.
//
// The tiles read are corrected by tapping them (tilerow.js, shared with the phone table's page). A photo of more
// than a hand (a whole table) first asks which row is the hand.
import { drawRow, editTile, keepOnly, label, openPicker, prepare, state } from "/static/tilerow.js";

const $ = (id) => document.getElementById(id);
// {width, height, tiles: [{tile, box, confidence, face_up, sure, guesses, group, row, fixed}], groups, rows}
let reading = null;
let picking = false; // a photo of more than a hand: the player taps the hand's row first
let winChosen = false; // the player chose the winning tile: kept as long as it is in the hand

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = !text;
}

// after each correction: a tile laid apart is the winning tile
function corrected({ apart }) {
  render();
  if (apart) { $("win").value = apart; winChosen = true; }
}

function render() {
  const boxes = $("boxes");
  boxes.replaceChildren();
  const row = $("row");
  row.replaceChildren();
  reading.tiles.forEach((t, i) => {
    const [x0, y0, x1, y1] = t.box;
    const b = document.createElement("button");
    b.type = "button";
    const s = state(t);
    b.className = "box" + (s === "back" ? " back" : s === "unknown" ? " unknown" : s === "unsure" ? " unsure" : "") +
      (t.fixed ? " fixed" : "");
    Object.assign(b.style, { left: `${(100 * x0) / reading.width}%`, top: `${(100 * y0) / reading.height}%`,
      width: `${(100 * (x1 - x0)) / reading.width}%`, height: `${(100 * (y1 - y0)) / reading.height}%` });
    b.dataset.index = i;
    b.title = `${label(t)} (${Math.round(100 * t.confidence)} %)`;
    const span = document.createElement("span");
    span.textContent = label(t);
    b.append(span);
    b.addEventListener("click", () => (picking ? pickRow(i) : editTile(reading, i, corrected)));
    boxes.append(b);
  });
  if (picking) {
    $("status").textContent = `${reading.tiles.length} tiles in this photo: tap a tile of the hand's row ` +
      "(or use every tile).";
    $("pick-bar").hidden = false;
    document.body.dataset.state = "pick";
    return;
  }
  $("pick-bar").hidden = true;
  drawRow(row, reading, corrected);
  const unknown = reading.tiles.filter((t) => state(t) === "unknown").length;
  const unsure = reading.tiles.filter((t) => state(t) === "unsure").length;
  const notSure = unknown + unsure;
  $("status").textContent = `${reading.tiles.length} tiles read` +
    (notSure ? `, ${notSure} not sure` + (unknown ? ` (${unknown} red: tap each to say which tile it is` +
      (unsure ? `; ${unsure} amber: taken as shown unless you tap them)` : ")") :
      " (amber: taken as shown unless you tap them)") : "; tap a tile to correct it") + ".";
  const win = $("win");
  const previous = win.value;
  win.replaceChildren(new Option("the tile laid apart", ""));
  const names = [...new Set(reading.tiles.filter((t) => t.tile && t.face_up).map((t) => t.tile))];
  for (const n of names) win.append(new Option(n, n));
  if (winChosen && names.includes(previous)) win.value = previous;
  else win.value = defaultWin();
}

// the winning tile the page assumes: none where a tile lies apart (the server takes it), else the last tile of the
// row that holds the hand (players put the winning tile at the end; a tile added by hand is not it)
function defaultWin() {
  const groups = reading.groups;
  if (!groups.length) return "";
  const largest = groups.reduce((a, g, k) => (g.length > groups[a].length ? k : a), 0);
  if (groups.some((g, k) => g.length === 1 && k !== largest)) return "";
  const row = reading.rows[largest];
  const read = groups.filter((_, k) => reading.rows[k] === row).flat().filter((i) => !reading.tiles[i].added);
  const last = reading.tiles[read[read.length - 1]];
  return last && last.tile && last.face_up ? last.tile : "";
}

// a photo of more than a hand: several rows of tiles, or more than a hand and its melds can hold
function needsPick(answer) {
  const rows = new Map();
  answer.groups.forEach((g, k) => rows.set(answer.rows[k], (rows.get(answer.rows[k]) || 0) + g.length));
  const full = [...rows.values()].filter((n) => n >= 3).length;
  return answer.tiles.length > 18 || full > 1;
}

function pickRow(index) {
  const r = reading.tiles[index].row;
  keepOnly(reading, (i) => reading.tiles[i].row === r);
  picking = false;
  $("conditions").hidden = false;
  render();
  document.body.dataset.state = "read";
}

async function readPhoto(file) {
  showError("");
  $("result").hidden = true;
  $("shot").src = URL.createObjectURL(file);
  $("status").textContent = "Reading the photo…";
  $("read").hidden = false;
  $("boxes").replaceChildren();
  $("row").replaceChildren();
  let answer;
  try {
    const response = await fetch("/api/score/read", { method: "POST", body: file,
      headers: { "Content-Type": file.type || "application/octet-stream" } });
    answer = await response.json();
    if (!response.ok) throw new Error(answer.error || `the server answered ${response.status}`);
  } catch (err) {
    $("read").hidden = true;
    $("conditions").hidden = true;
    showError(err.message);
    document.body.dataset.state = "error";
    return;
  }
  reading = prepare(answer);
  winChosen = false;
  picking = needsPick(reading);
  render();
  if (answer.problem) showError(answer.problem);
  $("conditions").hidden = !answer.tiles.length || picking;
  if (!picking) document.body.dataset.state = "read";
}

async function scoreHand(event) {
  event.preventDefault();
  document.body.dataset.state = "scoring"; // until the answer: a test or a script waits for what follows
  const form = new FormData($("win-form"));
  const body = {
    groups: reading.groups.map((g) => g.map((i) => ({ tile: reading.tiles[i].tile, face_up: reading.tiles[i].face_up }))),
    win: form.get("win") || null, tsumo: form.get("how") === "tsumo", riichi: !!form.get("riichi"),
    ippatsu: !!form.get("ippatsu"), seat: form.get("seat"), round: form.get("round"),
    dora: String(form.get("dora") || "").split(/[\s,]+/).filter(Boolean),
  };
  const result = $("result");
  result.hidden = false;
  result.replaceChildren();
  let answer;
  try {
    const response = await fetch("/api/score/hand", { method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json" } });
    answer = await response.json();
    if (!response.ok) throw new Error(answer.error || `the server answered ${response.status}`);
  } catch (err) {
    const p = document.createElement("p");
    p.className = "error";
    p.textContent = `Cannot score: ${err.message}`;
    result.append(p);
    result.scrollIntoView({ block: "nearest" });
    document.body.dataset.state = "refused";
    return;
  }
  const add = (tag, cls, text) => { const e = document.createElement(tag); e.className = cls; e.textContent = text;
    result.append(e); return e; };
  add("div", "total", `${answer.points.total} points`);
  const summary = answer.yakuman ? (answer.limit || "yakuman") :
    `${answer.han} han ${answer.fu} fu` + (answer.limit ? `, ${answer.limit}` : "");
  add("div", "summary", summary);
  const ul = add("ul", "yaku", "");
  for (const y of answer.yaku) {
    const li = document.createElement("li");
    const name = document.createElement("span");
    name.textContent = y.name;
    const han = document.createElement("b");
    han.textContent = answer.yakuman ? "yakuman" : `${y.han} han`;
    li.append(name, han);
    ul.append(li);
  }
  const pays = Object.entries(answer.points.payments).map(([who, n]) =>
    `${who === "discarder" ? "the discarder" : who} pays ${n}`).join(", ");
  add("p", "pays", pays);
  const guessed = reading.tiles.filter((t) => state(t) === "unsure").length;
  if (guessed) add("p", "guessed", `${guessed} tile(s) not sure were taken as shown (amber): check them.`);
  add("p", "hand", `${answer.hand} · rules ${answer.rules}`);
  result.scrollIntoView({ block: "nearest" });
  document.body.dataset.state = "scored";
}

$("photo").addEventListener("change", (e) => { if (e.target.files.length) readPhoto(e.target.files[0]); });
$("win-form").addEventListener("submit", scoreHand);
$("win").addEventListener("change", () => { winChosen = true; });
$("use-all").addEventListener("click", () => {
  picking = false;
  $("conditions").hidden = false;
  render();
  document.body.dataset.state = "read";
});
$("add-dora").addEventListener("click", () => openPicker((name) => {
  const dora = $("dora");
  dora.value = [dora.value.trim(), name].filter(Boolean).join(" ");
  render();
}, { title: "Which dora indicator?" }));
document.body.dataset.state = "ready";
