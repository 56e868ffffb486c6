// The broadcast scenes (OBS browser sources): transparent, designed at 1920x1080 in rem (1rem = 1/192 of the
// width), so 1280x720 is the same layout at two thirds. Driven by the broadcast stream alone
// (/broadcast/sse/<site>/<table>?key=...): "hands" (broadcast/hands, delayed by the organiser), "cards"
// (chombos and the tournament's penalties); intro and statistics read the club's records once.
// Scenes: /broadcast/<site>/<table>/<scene>?key=... with scene hands | seat (&seat=E) | cards | intro | stats.
import { el, tile, tileName } from "/static/feed.js";

const parts = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
const [, site, table, scene] = parts;
const params = new URLSearchParams(location.search);
const key = params.get("key") || "";
const onlySeat = (params.get("seat") || "E").toUpperCase();
const SEATS = ["E", "S", "W", "N"];
const WIND_NAMES = { E: "East", S: "South", W: "West", N: "North" };
const app = document.getElementById("app");
document.body.classList.add(`scene-${scene}`);
const model = { hands: null, state: null, cards: [], players: null, problem: null, records: false };
const anim = { scores: {}, riichi: {}, cards: {} }; // seat -> running animations, kept across renders
const ANIM_MS = 1400;

// ------------------------------------------------------------------ tiles and numbers

const SUIT_ORDER = { m: 0, p: 1, s: 2 };
const HONOURS = ["E", "S", "W", "N", "P", "F", "C"];
function kind(t) { // "5mr" and "5m" are one kind
  const n = tileName(t);
  if (!n) return null;
  return n.endsWith("r") ? n.slice(0, 2) : n;
}
function order(t) {
  const k = kind(t);
  if (!k) return 99;
  if (HONOURS.includes(k)) return 27 + HONOURS.indexOf(k);
  return SUIT_ORDER[k[1]] * 9 + Number(k[0]) - 1 + (tileName(t).endsWith("r") ? 0.5 : 0);
}
const sorted = (tiles) => [...(tiles || [])].sort((a, b) => order(a) - order(b));
const fmt = (v) => (typeof v === "number" ? Math.round(v).toLocaleString("en") : "—");
const short = (v) => (v >= 1000 ? `${(v / 1000).toFixed(v % 1000 ? 1 : 0)}k` : String(v));
function signed(v) {
  if (typeof v !== "number") return "—";
  return v > 0 ? `+${fmt(v)}` : v < 0 ? `−${fmt(-v)}` : "±0";
}

// ------------------------------------------------------------------ animations kept across renders

function scoreNow(seat, score) {
  const a = anim.scores[seat];
  if (!a) { anim.scores[seat] = { from: score, to: score, start: 0 }; return score; }
  if (a.to !== score) {
    const shown = scoreAt(a, performance.now());
    anim.scores[seat] = { from: shown, to: score, start: performance.now(), delta: score - a.to };
    tick();
  }
  return scoreAt(anim.scores[seat], performance.now());
}
function scoreAt(a, now) {
  const f = Math.min(1, (now - a.start) / ANIM_MS);
  const eased = 1 - (1 - f) ** 3;
  return Math.round(a.from + (a.to - a.from) * eased);
}
let ticking = false;
function tick() { // the score counters run until every one has arrived
  if (ticking) return;
  ticking = true;
  const step = () => {
    const now = performance.now();
    let running = false;
    for (const [seat, a] of Object.entries(anim.scores)) {
      const node = document.querySelector(`.nameplate[data-seat="${seat}"] .score`);
      if (node) node.textContent = fmt(scoreAt(a, now));
      if (now - a.start < ANIM_MS) running = true;
    }
    if (running) requestAnimationFrame(step); else ticking = false;
  };
  requestAnimationFrame(step);
}
function since(map, id, on) { // how long ago a thing turned on (ms), kept across renders; null while off
  if (!on) { delete map[id]; return null; }
  if (map[id] === undefined) map[id] = performance.now();
  return performance.now() - map[id];
}
function running(node, elapsed, cls) { // a CSS animation that goes on where it was, not from the start
  if (elapsed === null) return node;
  node.classList.add(cls);
  node.style.animationDelay = `${-Math.round(elapsed)}ms`;
  return node;
}

// ------------------------------------------------------------------ pieces

function nameplate(s, hands) {
  // the seat's wind in this hand (the payload's "wind"; else from the round: seat E deals E1, S deals E2 ...)
  const wind = s.wind || (hands && hands.round ? SEATS[(SEATS.indexOf(s.seat) - Number(hands.round.slice(1)) + 1 + 8) % 4] : s.seat);
  const dealer = wind === "E";
  const shown = typeof s.score === "number" ? scoreNow(s.seat, s.score) : null;
  const a = anim.scores[s.seat];
  const box = el("div", { class: `nameplate${hands && hands.turn === s.seat ? " turn" : ""}`, "data-seat": s.seat },
    el("span", { class: `wind${dealer ? " dealer" : ""}`, text: wind, title: `${WIND_NAMES[wind]} wind` }),
    el("span", { class: "name", text: s.name || WIND_NAMES[s.seat] }),
    el("span", { class: "score", text: fmt(shown) }));
  if (a && a.delta && performance.now() - a.start < 4000) {
    box.append(running(el("span", { class: `delta ${a.delta > 0 ? "up" : "down"}`, text: signed(a.delta) }),
      performance.now() - a.start, "fly"));
  }
  const riichi = since(anim.riichi, s.seat, !!s.riichi);
  if (riichi !== null) {
    box.append(running(el("span", { class: "riichi-stick", title: "riichi" }, el("span", { class: "dot" })),
      riichi, "drop"));
    if (riichi < 2500) box.append(running(el("span", { class: "riichi-call", text: "RIICHI" }), riichi, "call"));
  }
  return box;
}

function handTiles(s, dealIn) {
  const box = el("div", { class: "hand" });
  const mark = (t) => {
    const node = tile(t);
    const who = dealIn[kind(t)];
    if (who && who.length) {
      node.classList.add("deal-in");
      const top = Math.max(...who.map((x) => x.points || 0));
      node.title = who.map((x) => `deals in to ${x.seat}: ${x.points}`).join(", ");
      node.append(el("span", { class: "deal-in-points", text: short(top) }));
    }
    return node;
  };
  const concealed = el("div", { class: "concealed" }, ...sorted(s.concealed).map(mark));
  box.append(concealed);
  if (s.drawn) box.append(el("div", { class: "drawn" }, mark(s.drawn)));
  const melds = el("div", { class: "melds" });
  for (const m of s.melds || []) melds.append(meld(s.seat, m));
  if ((s.melds || []).length) box.append(melds);
  return box;
}

function meld(seat, m) {
  const tiles = (m.tiles || []).slice();
  const box = el("span", { class: `meld ${m.kind || ""}`.trim(), "data-kind": m.kind || "" });
  if (m.kind === "closed_kan") {
    tiles.forEach((t, i) => box.append(tile(i === 0 || i === tiles.length - 1 ? null : t, i === 0 || i === 3 ? "back" : "")));
    return box;
  }
  const rel = m.from ? (SEATS.indexOf(m.from) - SEATS.indexOf(seat) + 4) % 4 : null; // 3 left, 2 opposite, 1 right
  let at = rel === 3 ? 0 : rel === 2 ? 1 : tiles.length - 1;
  if (m.called) {
    const i = tiles.findIndex((t) => tileName(t) === tileName(m.called));
    if (i >= 0) { const [c] = tiles.splice(i, 1); tiles.splice(Math.min(at, tiles.length), 0, c); }
  }
  if (rel === null) at = -1;
  tiles.forEach((t, i) => box.append(tile(t, i === at ? "turned" : "")));
  return box;
}

function info(s) {
  const box = el("div", { class: "info" });
  const waits = Object.entries(s.waits || {}).sort((a, b) => order(a[0]) - order(b[0]));
  let label;
  if (typeof s.shanten !== "number") label = "";
  else if (s.shanten < 0) label = "Complete";
  else if (s.shanten === 0) label = "Tenpai";
  else label = `${s.shanten}-shanten`;
  const tags = el("div", { class: "tags" }, el("span", { class: `shanten s${Math.max(0, s.shanten ?? 9)}${s.karaten ? " karaten" : ""}`, text: label }));
  if (s.karaten) tags.append(el("span", { class: "karaten-tag", text: "karaten: no winning tile left" }));
  if (s.furiten) tags.append(el("span", { class: "furiten", text: "furiten" }));
  box.append(tags);
  if (waits.length) {
    const left = waits.reduce((n, [, w]) => n + (w.wall || 0), 0);
    const list = el("div", { class: "waits" });
    for (const [t, w] of waits) {
      list.append(el("span", { class: `wait${w.wall ? "" : " none"}`, "data-tile": kind(t), title: `${w.unseen ?? "?"} unseen by this player` },
        tile(t), el("span", { class: "left", text: `${w.wall ?? "?"}` })));
    }
    box.append(list, el("span", { class: `total${left ? "" : " none"}`, text: left ? `${left} left` : "none left" }));
  } else if (s.ukeire && s.shanten > 0) {
    const kinds = Object.keys(s.ukeire).length;
    const count = Object.values(s.ukeire).reduce((n, v) => n + (v || 0), 0);
    box.append(el("span", { class: "ukeire", text: `${count} tiles improve (${kinds} kinds)` }));
  }
  return box;
}

function seatRow(s, hands) {
  const dealIn = hands.turn === s.seat ? s.deal_in || {} : {};
  const row = el("div", { class: `seat-row${hands.turn === s.seat ? " turn" : ""}`, "data-seat": s.seat },
    nameplate(s, hands), handTiles(s, dealIn), info(s));
  const riichi = since(anim.riichi, `row-${s.seat}`, !!s.riichi);
  return running(row, riichi !== null && riichi < 2500 ? riichi : null, "riichi-flash");
}

function roundBox(hands) {
  const box = el("div", { class: "round-box" },
    el("span", { class: "round", text: hands.round ? `${WIND_NAMES[hands.round[0]] || ""} ${hands.round.slice(1)}` : "" }),
    el("span", { class: "counters", text: `${hands.honba ?? 0} honba · ${hands.sticks ?? 0} riichi` }));
  if (typeof hands.wall === "number") box.append(el("span", { class: "wall", text: `${hands.wall} in the wall` }));
  if ((hands.dora || []).length) box.append(el("span", { class: "dora" }, el("span", { class: "label", text: "Dora" }), ...hands.dora.map((t) => tile(t))));
  if (hands.delay_s) box.append(el("span", { class: "delay", text: `${hands.delay_s} s delay` }));
  return box;
}

function card(c, big = false) {
  const node = el("div", { class: `card ${c.color}${big ? " big" : ""}`, "data-id": c.id },
    el("span", { class: "card-icon" }),
    el("div", { class: "card-text" },
      el("span", { class: "card-name", text: c.name || "" }),
      el("span", { class: "card-reason", text: [c.kind === "warning" ? "Warning" : c.kind === "chombo" ? "Chombo" : "Penalty",
        c.kind !== "chombo" ? c.reason : null, c.hand].filter(Boolean).join(" · ") })),
    c.points ? el("span", { class: "card-points", text: signed(-c.points) }) : null);
  return running(node, since(anim.cards, c.id, true), "card-in");
}

function recentCards(limit) {
  return model.cards.slice(-limit);
}

// ------------------------------------------------------------------ scenes

function seatsOf(hands) {
  const seats = (hands && Array.isArray(hands.seats) ? hands.seats : []).filter((s) => s && typeof s === "object");
  return SEATS.map((w) => seats.find((s) => s.seat === w)).filter(Boolean);
}

// The hands scene is updated in place: a row (or the round box with the cards) is built again only when what
// it shows changed, so a discard redraws one or two rows, and what runs in the others (a score counting, the
// riichi call, a card's entrance) goes on undisturbed.
const kept = { stage: null, rowsBox: null, side: null, sideKey: null, rows: new Map() };

function handsScene() {
  const hands = model.hands;
  if (!hands) { kept.stage = null; return el("div", { class: "waiting", text: "waiting for the table's hands…" }); }
  if (!kept.stage) {
    kept.stage = el("div", { class: "stage" });
    kept.rowsBox = el("div", { class: "rows" });
    kept.stage.append(kept.rowsBox);
    kept.side = null; kept.sideKey = null; kept.rows = new Map();
  }
  if (scene === "hands") {
    const cards = recentCards(3);
    const sideKey = JSON.stringify([hands.round, hands.honba, hands.sticks, hands.wall, hands.dora, hands.delay_s, cards]);
    if (sideKey !== kept.sideKey) {
      const side = el("div", { class: "side" }, roundBox(hands));
      if (cards.length) side.append(el("div", { class: "cards" }, ...cards.map((c) => card(c))));
      if (kept.side) kept.side.replaceWith(side); else kept.stage.prepend(side);
      kept.side = side; kept.sideKey = sideKey;
    }
  }
  const seats = seatsOf(hands).filter((s) => scene !== "seat" || s.seat === onlySeat);
  const wanted = new Set(seats.map((s) => s.seat));
  for (const [seat, row] of kept.rows) if (!wanted.has(seat)) { row.node.remove(); kept.rows.delete(seat); }
  let before = null;
  for (const s of seats) {
    const key = JSON.stringify([s, hands.turn, hands.round]);
    const row = kept.rows.get(s.seat);
    if (!row || row.key !== key) {
      const node = seatRow(s, hands);
      if (row) row.node.replaceWith(node); else if (before) before.after(node); else kept.rowsBox.prepend(node);
      kept.rows.set(s.seat, { key, node });
    }
    before = kept.rows.get(s.seat).node;
  }
  return kept.stage;
}

function cardsScene() {
  const cards = recentCards(4);
  return el("div", { class: "stage" }, el("div", { class: "cards big-cards" }, ...cards.map((c) => card(c, true))));
}

function names() {
  const seats = seatsOf(model.hands);
  if (seats.length === 4) return seats.map((s) => ({ seat: s.seat, name: s.name, score: s.score, riichi: s.riichi }));
  const st = model.state && Array.isArray(model.state.seats) ? model.state.seats : [];
  return st.length === 4 ? st.map((s, i) => ({ seat: SEATS[i], name: s.name, score: s.score })) : [];
}

function statValue(label, value) {
  if (value === null || value === undefined) return "—";
  if (label.kind === "rate") return `${(value * 100).toFixed(1)}%`;
  if (label.kind === "place") return value.toFixed(2);
  if (label.kind === "signed") return signed(value);
  return fmt(value);
}

const INTRO = ["games", "average_place", "win_rate", "deal_in_rate", "riichi_rate", "call_rate", "average_win", "biggest_win"];

function introScene() {
  const people = names();
  if (!people.length) return el("div", { class: "waiting", text: "waiting for the table's players…" });
  const data = model.players;
  const labels = data ? Object.fromEntries(data.labels.map((l) => [l.key, l])) : {};
  const row = el("div", { class: "intro-cards" });
  people.forEach((p, i) => {
    const known = data && data.players[i] && data.players[i].name === p.name ? data.players[i] : null;
    const where = known ? [known.club, known.country].filter(Boolean).join(" · ") : "";
    const cardNode = el("div", { class: "intro-card", "data-seat": p.seat },
      el("div", { class: "intro-wind", text: WIND_NAMES[p.seat] }),
      el("div", { class: "intro-name", text: p.name || WIND_NAMES[p.seat] }),
      el("div", { class: "intro-where", text: where || " " }),
      el("div", { class: "intro-score", text: typeof p.score === "number" ? fmt(p.score) : "" }));
    const list = el("dl", { class: "intro-stats" });
    for (const k of INTRO) {
      if (!labels[k]) continue;
      list.append(el("dt", { text: labels[k].label }), el("dd", { text: known ? statValue(labels[k], known.all[k]) : "—" }));
    }
    cardNode.append(el("div", { class: "intro-caption", text: "every game on record" }), list);
    row.append(running(cardNode, since(anim.cards, `intro-${i}`, true), "card-in"));
  });
  const stage = el("div", { class: "stage" }, row);
  if (model.problem) stage.append(el("div", { class: "problem", text: model.problem }));
  return stage;
}

function statsScene() {
  const data = model.players;
  if (!data) return el("div", { class: "waiting", text: model.problem || "reading the club's records…" });
  const period = params.get("period") === "all" ? "all" : "day";
  const day = data.since ? data.since.slice(0, 10) : "";
  const head = el("tr", {}, el("th", { text: "" }), ...data.players.map((p) => el("th", { text: p.name })));
  const body = data.labels.map((l) => el("tr", { "data-stat": l.key }, el("td", { class: "label", text: l.label }),
    ...data.players.map((p) => el("td", { text: statValue(l, p[period][l.key]) }))));
  return el("div", { class: "stage" }, el("div", { class: "slide" },
    el("div", { class: "slide-title" }, el("span", { text: period === "all" ? "Every game on record" : "Statistics of the day" }),
      el("span", { class: "slide-sub", text: `${site} / ${table}${period === "day" && day ? " · " + day : ""}` })),
    el("table", { class: "stats" }, el("thead", {}, head), el("tbody", {}, ...body))));
}

function render() {
  const began = performance.now();
  const shown = scene === "cards" ? cardsScene() : scene === "intro" ? introScene()
    : scene === "stats" ? statsScene() : handsScene();
  if (app.firstChild !== shown || app.childNodes.length !== 1) app.replaceChildren(shown);
  document.body.dataset.hands = model.hands ? String(model.hands.seq ?? "") : "";
  document.body.dataset.cards = String(model.cards.length);
  document.body.dataset.players = model.players ? "yes" : "no";
  const seq = model.hands ? model.hands.seq : null;
  if (seq !== null && seq !== undefined && !drawnSeqs.has(seq) && drawnSeqs.size < 5000) {
    drawnSeqs.add(seq); // when each payload was on screen: the next frame begins once this one is painted
    work.push([seq, performance.now() - began]);
    requestAnimationFrame(() => rendered.push([seq, Date.now()]));
  }
}
const drawnSeqs = new Set();
const rendered = []; // [seq, ms since the epoch] (bench/broadcast_scene.py reads them)
const work = []; // [seq, ms the script spent building the scene for it]
const arrived = []; // [seq, ms since the epoch]: when each payload came off the stream

// ------------------------------------------------------------------ data

let asked = "";
async function readPlayers() {
  if (scene !== "intro" && scene !== "stats") return;
  const people = names().map((p) => p.name).join("\u0000");
  if (!people || people === asked) return;
  asked = people;
  const q = new URLSearchParams({ key });
  if (params.get("since")) q.set("since", params.get("since"));
  try {
    const r = await fetch(`/broadcast/api/${encodeURIComponent(site)}/${encodeURIComponent(table)}/players?${q}`, { cache: "no-store" });
    const data = await r.json();
    if (!r.ok) { model.problem = data.error || `the records cannot be read (${r.status})`; asked = ""; }
    else { model.players = data; model.problem = null; }
  } catch (err) {
    model.problem = "the records cannot be read just now"; asked = "";
  }
  schedule();
}

let pending = false;
function schedule() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => { pending = false; render(); });
}

const source = new EventSource(`/broadcast/sse/${encodeURIComponent(site)}/${encodeURIComponent(table)}?key=${encodeURIComponent(key)}`);
const on = (name, f) => source.addEventListener(name, (ev) => {
  try { f(JSON.parse(ev.data)); } catch (err) { console.error(name, err); }
  schedule();
  readPlayers();
});
on("hello", (d) => { model.records = !!d.records; });
function settled(map, ids) { // what the page finds on opening is shown at rest: no entrance, no riichi call
  for (const id of ids) if (map[id] === undefined) map[id] = -1e9;
}
on("hands", (d) => {
  if (!model.hands && Array.isArray(d.seats)) {
    settled(anim.riichi, d.seats.filter((s) => s && s.riichi).flatMap((s) => [s.seat, `row-${s.seat}`]));
  }
  model.hands = d;
  if (arrived.length < 5000) arrived.push([d.seq, Date.now()]);
});
on("state", (d) => { model.state = d; });
let cardsSeen = false;
on("cards", (d) => {
  model.cards = Array.isArray(d.cards) ? d.cards : [];
  if (!cardsSeen) settled(anim.cards, model.cards.map((c) => c.id));
  cardsSeen = true;
});
source.onopen = () => { document.body.dataset.connected = "yes"; };
source.onerror = () => { document.body.dataset.connected = "no"; };
window.tablesvcBroadcast = { model, source, rendered, arrived, work };
schedule();
