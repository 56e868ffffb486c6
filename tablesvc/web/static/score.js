// /score: photograph a winning hand, correct what was misread, score it. The photo is shown from the phone's own
// memory (an object URL) and sent once to be read; the server keeps nothing.
const TILES = [..."mps"].flatMap((s) => [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `${n}${s}`))
  .concat(["E", "S", "W", "N", "P", "F", "C", "5mr", "5pr", "5sr"]);
const $ = (id) => document.getElementById(id);
let reading = null; // {width, height, tiles: [{tile, box, confidence, face_up, group, fixed}], groups}

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

function render() {
  const boxes = $("boxes");
  boxes.replaceChildren();
  const row = $("row");
  row.replaceChildren();
  reading.tiles.forEach((t, i) => {
    const [x0, y0, x1, y1] = t.box;
    const b = document.createElement("button");
    b.type = "button";
    b.className = "box" + (!t.face_up ? " back" : t.tile ? "" : " unknown") + (t.fixed ? " fixed" : "");
    Object.assign(b.style, { left: `${(100 * x0) / reading.width}%`, top: `${(100 * y0) / reading.height}%`,
      width: `${(100 * (x1 - x0)) / reading.width}%`, height: `${(100 * (y1 - y0)) / reading.height}%` });
    b.dataset.index = i;
    b.title = `${label(t)} (${Math.round(100 * t.confidence)} %)`;
    const span = document.createElement("span");
    span.textContent = label(t);
    b.append(span);
    b.addEventListener("click", () => pick(i));
    boxes.append(b);
  });
  for (const group of reading.groups) {
    const g = document.createElement("div");
    g.className = "group";
    for (const i of group) {
      const t = reading.tiles[i];
      const b = document.createElement("button");
      b.type = "button";
      b.className = "tile" + (t.tile && t.face_up ? "" : " unknown") + (t.fixed ? " fixed" : "");
      b.dataset.index = i;
      if (t.tile && t.face_up) b.append(tileImage(t.tile));
      else b.textContent = t.face_up ? "?" : "#";
      b.addEventListener("click", () => pick(i));
      g.append(b);
    }
    row.append(g);
  }
  const unknown = reading.tiles.filter((t) => t.face_up && !t.tile).length;
  $("status").textContent = `${reading.tiles.length} tiles read` +
    (unknown ? `, ${unknown} not sure (red): tap each to say which tile it is` : "; tap a tile to correct it") + ".";
  const win = $("win");
  const previous = win.value;
  win.replaceChildren(new Option("the tile laid apart", ""));
  const names = [...new Set(reading.tiles.filter((t) => t.tile && t.face_up).map((t) => t.tile))];
  for (const n of names) win.append(new Option(n, n));
  if (names.includes(previous)) win.value = previous;
}

function pick(index) {
  openPicker((value) => {
    if (value === "__none") {
      reading.tiles[index].removed = true;
      dropRemoved();
    } else {
      Object.assign(reading.tiles[index], { tile: value, face_up: true, fixed: true });
    }
    render();
  }, true);
}

function openPicker(choose, removable) {
  const dialog = $("picker");
  const choices = $("choices");
  const chosen = (value) => { dialog.close(); choose(value); };
  choices.replaceChildren();
  for (const name of TILES) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.tile = name;
    b.append(tileImage(name));
    b.addEventListener("click", () => chosen(name));
    choices.append(b);
  }
  if (removable) {
    const none = document.createElement("button");
    none.type = "button";
    none.className = "none";
    none.textContent = "not a tile of the hand (remove)";
    none.addEventListener("click", () => chosen("__none"));
    choices.append(none);
  }
  dialog.showModal();
}

function dropRemoved() {
  const keep = reading.tiles.map((t, i) => (t.removed ? -1 : i));
  const moved = new Map();
  const tiles = [];
  keep.forEach((i) => { if (i >= 0) { moved.set(i, tiles.length); tiles.push(reading.tiles[i]); } });
  reading.groups = reading.groups.map((g) => g.filter((i) => moved.has(i)).map((i) => moved.get(i)))
    .filter((g) => g.length);
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
  render();
  if (answer.problem) showError(answer.problem);
  $("conditions").hidden = !answer.tiles.length;
  document.body.dataset.state = "read";
}

async function scoreHand(event) {
  event.preventDefault();
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
  add("p", "hand", `${answer.hand} · rules ${answer.rules}`);
  result.scrollIntoView({ block: "nearest" });
  document.body.dataset.state = "scored";
}

$("photo").addEventListener("change", (e) => { if (e.target.files.length) readPhoto(e.target.files[0]); });
$("win-form").addEventListener("submit", scoreHand);
$("add-dora").addEventListener("click", () => openPicker((name) => {
  const dora = $("dora");
  dora.value = [dora.value.trim(), name].filter(Boolean).join(" ");
}, false));
document.body.dataset.state = "ready";
