// /score: photograph a winning hand, correct what was misread, score it. The photo is shown from the phone's own
// memory (an object URL) and sent once to be read; the server keeps nothing.
//
// A tile is shown as read only where the reader is sure of it; a tile it is not sure of shows its best guess in
// amber (taken as that guess unless corrected), an unknown one a red "?": tapping either offers its best guesses
// first. Any tile can be changed, removed, laid apart (the winning tile), or its group split before it (a meld
// set apart); "+" at the end of a group adds a tile the reader missed. A photo of more than a hand (a whole
// table) first asks which row is the hand.
const TILES = [..."mps"].flatMap((s) => [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `${n}${s}`))
  .concat(["E", "S", "W", "N", "P", "F", "C", "5mr", "5pr", "5sr"]);
const $ = (id) => document.getElementById(id);
// {width, height, tiles: [{tile, box, confidence, face_up, sure, guesses, group, row, fixed}], groups, rows}
let reading = null;
let picking = false; // a photo of more than a hand: the player taps the hand's row first
let winChosen = false; // the player chose the winning tile: kept as long as it is in the hand

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = !text;
}

function tileImage(name) {
  const img = document.createElement("img");
  img.src = `/tiles/${name}.svg`;
  img.alt = name;
  return img;
}

function label(t) {
  return !t.face_up ? "back" : (t.tile || "?");
}

// how a tile is shown: "sure" (read, or said by the player), "unsure" (a best guess), "unknown", "back"
function state(t) {
  if (!t.face_up) return "back";
  if (!t.tile) return "unknown";
  return t.sure || t.fixed ? "sure" : "unsure";
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
    b.addEventListener("click", () => (picking ? pickRow(i) : pick(i)));
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
  reading.groups.forEach((group, k) => {
    const g = document.createElement("div");
    g.className = "group";
    for (const i of group) {
      const t = reading.tiles[i];
      const b = document.createElement("button");
      b.type = "button";
      const s = state(t);
      b.className = "tile " + s + (t.fixed ? " fixed" : "");
      b.dataset.index = i;
      if (t.tile && t.face_up) b.append(tileImage(t.tile));
      else b.textContent = t.face_up ? "?" : "#";
      if (s === "unsure") {
        const mark = document.createElement("i");
        mark.textContent = "?";
        b.append(mark);
      }
      b.setAttribute("aria-label", s === "sure" ? t.tile : s === "unsure" ? `${t.tile}, not sure` : s);
      b.addEventListener("click", () => pick(i));
      g.append(b);
    }
    const add = document.createElement("button");
    add.type = "button";
    add.className = "add";
    add.dataset.group = k;
    add.textContent = "+";
    add.setAttribute("aria-label", "add a tile the photo missed here");
    add.addEventListener("click", () => addTile(k));
    g.append(add);
    row.append(g);
  });
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
  keepOnly((i) => reading.tiles[i].row === r);
  picking = false;
  $("conditions").hidden = false;
  render();
  document.body.dataset.state = "read";
}

function keepOnly(keep) {
  reading.tiles.forEach((t, i) => { t.removed = !keep(i); });
  dropRemoved();
}

function pick(index) {
  const t = reading.tiles[index];
  const where = reading.groups.findIndex((g) => g.includes(index));
  const at = reading.groups[where].indexOf(index);
  const actions = [["remove", "Not a tile of the hand (remove)", "none"],
    ["apart", "The winning tile (lay it apart)", "apart"]];
  if (at > 0) actions.push(["split", "Set apart from here (a meld)", "split"]);
  if (where > 0 && at === 0) actions.push(["join", "Join the group before", "join"]);
  openPicker((value) => {
    if (value === "remove") {
      t.removed = true;
      dropRemoved();
    } else if (value === "apart") {
      moveApart(where, at, at + 1);
      if (t.tile && t.face_up) { $("win").value = t.tile; winChosen = true; }
    } else if (value === "split") {
      moveApart(where, at, reading.groups[where].length);
    } else if (value === "join") {
      reading.groups[where - 1].push(...reading.groups[where]);
      reading.groups.splice(where, 1);
      reading.rows.splice(where, 1);
    } else {
      Object.assign(t, { tile: value, face_up: true, fixed: true });
    }
  }, { title: state(t) === "sure" ? `${t.tile}: correct it` : "Which tile is it?", guesses: t.guesses || [],
    actions });
}

// tiles [from, to) of a group become a group of their own, right after it
function moveApart(where, from, to) {
  const g = reading.groups[where];
  const moving = g.slice(from, to);
  const rest = g.slice(0, from).concat(g.slice(to));
  const parts = rest.length ? [rest, moving] : [moving];
  reading.groups.splice(where, 1, ...parts);
  reading.rows.splice(where, 1, ...parts.map(() => reading.rows[where]));
}

function addTile(group) {
  openPicker((value) => {
    const near = reading.tiles[reading.groups[group][reading.groups[group].length - 1]];
    reading.tiles.push({ tile: value, box: near ? near.box : [0, 0, 0, 0], confidence: 1, face_up: true, sure: true,
      guesses: [], fixed: true, added: true, row: near ? near.row : 0 });
    reading.groups[group].push(reading.tiles.length - 1);
  }, { title: "Which tile is missing?", guesses: [], actions: [] });
}

function openPicker(choose, { title = "Which tile is it?", guesses = [], actions = [] } = {}) {
  const dialog = $("picker");
  $("picker-title").textContent = title;
  const chosen = (value) => { dialog.close(); choose(value); render(); };
  const tileButton = (name, attr) => {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset[attr] = name;
    b.append(tileImage(name));
    b.addEventListener("click", () => chosen(name));
    return b;
  };
  $("guesses").replaceChildren(...guesses.map((name) => tileButton(name, "guess")));
  $("guesses").hidden = !guesses.length;
  $("actions").replaceChildren(...actions.map(([value, text, cls]) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.dataset.action = value;
    b.textContent = text;
    b.addEventListener("click", () => chosen(value));
    return b;
  }));
  $("choices").replaceChildren(...TILES.map((name) => tileButton(name, "tile")));
  dialog.showModal();
}

function dropRemoved() {
  const keep = reading.tiles.map((t, i) => (t.removed ? -1 : i));
  const moved = new Map();
  const tiles = [];
  keep.forEach((i) => { if (i >= 0) { moved.set(i, tiles.length); tiles.push(reading.tiles[i]); } });
  const groups = reading.groups.map((g) => g.filter((i) => moved.has(i)).map((i) => moved.get(i)));
  reading.rows = reading.rows.filter((_, k) => groups[k].length);
  reading.groups = groups.filter((g) => g.length);
  reading.tiles = tiles;
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
  reading = answer;
  reading.rows = reading.rows || reading.groups.map(() => 0);
  reading.groups.forEach((g, k) => g.forEach((i) => { reading.tiles[i].row = reading.rows[k]; }));
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
}, { title: "Which dora indicator?" }));
document.body.dataset.state = "ready";
