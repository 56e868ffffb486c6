// The tiles read from a photo, corrected by tapping them: shared by /score and the phone table's page (/play).
//
// A reading is the photo reader's answer ({tiles: [{tile, box, confidence, face_up, sure, guesses, fixed}], groups,
// rows}). A tile is shown as read only where the reader is sure of it; a tile it is not sure of shows its best guess
// in amber (taken as that guess unless corrected), an unknown one a red "?": tapping either offers its best guesses
// first. Any tile can be changed, removed, laid apart (the winning tile), or its group split before it (a meld set
// apart); "+" at the end of a group adds a tile the reader missed. Every button is a finger's width (44 CSS px at
// least, tilerow.css).
export const TILES = [..."mps"].flatMap((s) => [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `${n}${s}`))
  .concat(["E", "S", "W", "N", "P", "F", "C", "5mr", "5pr", "5sr"]);

export function tileImage(name) {
  const img = document.createElement("img");
  img.src = `/tiles/${name}.svg`;
  img.alt = name;
  return img;
}

export function label(t) {
  return !t.face_up ? "back" : (t.tile || "?");
}

// how a tile is shown: "sure" (read, or said by the player), "unsure" (a best guess), "unknown", "back"
export function state(t) {
  if (!t.face_up) return "back";
  if (!t.tile) return "unknown";
  return t.sure || t.fixed ? "sure" : "unsure";
}

// The reader's answer made ready for correcting: each tile knows its row.
export function prepare(answer) {
  answer.rows = answer.rows || answer.groups.map(() => 0);
  answer.groups.forEach((g, k) => g.forEach((i) => { answer.tiles[i].row = answer.rows[k]; }));
  return answer;
}

// The groups as the hand's layout takes them: [[{tile, face_up}]].
export function laidGroups(reading) {
  return reading.groups.map((g) => g.map((i) => ({ tile: reading.tiles[i].tile, face_up: reading.tiles[i].face_up })));
}

// The tile buttons of `reading` into `row` (one group after another, each with its "+"). `changed({apart})` follows
// every correction (`apart`: the tile the player laid apart as the winning one, if that was the correction).
export function drawRow(row, reading, changed) {
  row.replaceChildren();
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
      b.addEventListener("click", () => editTile(reading, i, changed));
      g.append(b);
    }
    const add = document.createElement("button");
    add.type = "button";
    add.className = "add";
    add.dataset.group = k;
    add.textContent = "+";
    add.setAttribute("aria-label", "add a tile the photo missed here");
    add.addEventListener("click", () => addTile(reading, k, changed));
    g.append(add);
    row.append(g);
  });
}

// A tap on a tile: its best guesses, every tile, and what can be done with it.
export function editTile(reading, index, changed) {
  const t = reading.tiles[index];
  const where = reading.groups.findIndex((g) => g.includes(index));
  const at = reading.groups[where].indexOf(index);
  const actions = [["remove", "Not a tile of the hand (remove)", "none"],
    ["apart", "The winning tile (lay it apart)", "apart"]];
  if (at > 0) actions.push(["split", "Set apart from here (a meld)", "split"]);
  if (where > 0 && at === 0) actions.push(["join", "Join the group before", "join"]);
  openPicker((value) => {
    let apart = null;
    if (value === "remove") {
      t.removed = true;
      dropRemoved(reading);
    } else if (value === "apart") {
      moveApart(reading, where, at, at + 1);
      if (t.tile && t.face_up) apart = t.tile;
    } else if (value === "split") {
      moveApart(reading, where, at, reading.groups[where].length);
    } else if (value === "join") {
      reading.groups[where - 1].push(...reading.groups[where]);
      reading.groups.splice(where, 1);
      reading.rows.splice(where, 1);
    } else {
      Object.assign(t, { tile: value, face_up: true, fixed: true });
    }
    changed({ apart });
  }, { title: state(t) === "sure" ? `${t.tile}: correct it` : "Which tile is it?", guesses: t.guesses || [],
    actions });
}

// "+" at the end of a group: a tile the reader missed.
export function addTile(reading, group, changed) {
  openPicker((value) => {
    const near = reading.tiles[reading.groups[group][reading.groups[group].length - 1]];
    reading.tiles.push({ tile: value, box: near ? near.box : [0, 0, 0, 0], confidence: 1, face_up: true, sure: true,
      guesses: [], fixed: true, added: true, row: near ? near.row : 0 });
    reading.groups[group].push(reading.tiles.length - 1);
    changed({ apart: null });
  }, { title: "Which tile is missing?", guesses: [], actions: [] });
}

// tiles [from, to) of a group become a group of their own, right after it
export function moveApart(reading, where, from, to) {
  const g = reading.groups[where];
  const moving = g.slice(from, to);
  const rest = g.slice(0, from).concat(g.slice(to));
  const parts = rest.length ? [rest, moving] : [moving];
  reading.groups.splice(where, 1, ...parts);
  reading.rows.splice(where, 1, ...parts.map(() => reading.rows[where]));
}

export function keepOnly(reading, keep) {
  reading.tiles.forEach((t, i) => { t.removed = !keep(i); });
  dropRemoved(reading);
}

export function dropRemoved(reading) {
  const keep = reading.tiles.map((t, i) => (t.removed ? -1 : i));
  const moved = new Map();
  const tiles = [];
  keep.forEach((i) => { if (i >= 0) { moved.set(i, tiles.length); tiles.push(reading.tiles[i]); } });
  const groups = reading.groups.map((g) => g.filter((i) => moved.has(i)).map((i) => moved.get(i)));
  reading.rows = reading.rows.filter((_, k) => groups[k].length);
  reading.groups = groups.filter((g) => g.length);
  reading.tiles = tiles;
}

// The tile sheet: the page's <dialog id="picker"> (its parts known by class), made here where the page has none.
function pickerDialog() {
  let dialog = document.getElementById("picker");
  if (dialog) return dialog;
  dialog = document.createElement("dialog");
  dialog.id = "picker";
  dialog.innerHTML = '<form method="dialog"><h2>Which tile is it?</h2><div class="guesses"></div>' +
    '<div class="actions"></div><div class="choices"></div><button value="cancel" class="cancel">Cancel</button></form>';
  document.body.append(dialog);
  return dialog;
}

export function openPicker(choose, { title = "Which tile is it?", guesses = [], actions = [] } = {}) {
  const dialog = pickerDialog();
  const find = (part) => dialog.querySelector(`.${part}`); // by class: the page's own ids stay its own
  dialog.querySelector("h2").textContent = title;
  const chosen = (value) => { dialog.close(); choose(value); };
  const tileButton = (name, attr) => {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset[attr] = name;
    b.append(tileImage(name));
    b.addEventListener("click", () => chosen(name));
    return b;
  };
  find("guesses").replaceChildren(...guesses.map((name) => tileButton(name, "guess")));
  find("guesses").hidden = !guesses.length;
  find("actions").replaceChildren(...actions.map(([value, text, cls]) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.dataset.action = value;
    b.textContent = text;
    b.addEventListener("click", () => chosen(value));
    return b;
  }));
  find("choices").replaceChildren(...TILES.map((name) => tileButton(name, "tile")));
  dialog.showModal();
}
