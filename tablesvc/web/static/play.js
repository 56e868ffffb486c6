// The phone table (/play/<site>/<table>): the game big, and each hand's result in a few taps. The page follows the
// table's feed like every other page; an entry is checked on the server (every payment shown) before it is sent,
// and sent with a key of its own, again and again until the table answers, so a lost connection never enters a
// hand twice. The table's token comes from the QR code (after #) and is kept on the phone.
import { connect, el, pathParts, points, seatName, signed, WINDS } from "/static/feed.js";
import { drawRow, laidGroups, prepare, state as tileState } from "/static/tilerow.js";

const { site, table } = pathParts();
const base = `${encodeURIComponent(site)}/${encodeURIComponent(table)}`;
const $ = (id) => document.getElementById(id);
const tokenKey = `tablesvc-play:${site}/${table}`;
const fromCode = new URLSearchParams(location.hash.slice(1)).get("t");
if (fromCode) {
  localStorage.setItem(tokenKey, fromCode);
  history.replaceState(null, "", location.pathname); // the token stays on the phone, not in the address bar
}
const token = localStorage.getItem(tokenKey);
const ROUND = { E: "East", S: "South", W: "West", N: "North" };
const HAN = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];
const FU = [20, 25, 30, 40, 50, 60, 70, 80, 90, 100, 110];
const FLAGS = [["ippatsu", "Ippatsu"], ["double_riichi", "Double riichi"], ["haitei", "Haitei"], ["houtei", "Houtei"],
  ["rinshan", "Rinshan"], ["chankan", "Chankan"], ["tenhou", "Tenhou"], ["chiihou", "Chiihou"]];
const ABORTS = [["nine_terminals", "Nine terminals"], ["four_winds", "Four winds"], ["four_riichi", "Four riichi"],
  ["four_kans", "Four kans"]];

let model = {};
let draft = null; // the entry being made
let pending = null; // {event, key, preview, draft}: checked, waiting for the players' confirmation
let sending = null; // the pending entry being sent: the hand it enters may show on the feed before its answer

$("title").textContent = `${site} / ${table}`;

function notice(text, ok = false) {
  const n = $("notice");
  n.hidden = !text;
  n.textContent = text || "";
  n.classList.toggle("ok", ok);
}

function randomKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16)); // randomUUID needs https; this does not
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function handNumber() {
  const m = /#(\d+)$/.exec((model.state && model.state.hand_id) || "");
  return m ? Number(m[1]) - 1 : null;
}

function names() {
  return [0, 1, 2, 3].map((s) => seatName(model.state, s));
}

async function post(body) {
  const response = await fetch(`/api/play/${base}`, { method: "POST", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json", "X-Table-Token": token || "" } });
  let answer = {};
  try { answer = await response.json(); } catch { answer = { error: `the server answered ${response.status}` }; }
  return { status: response.status, answer };
}

// An entry (or a start) sent until the table answers: a dropped connection or a busy table is tried again with the
// same key, which the table carries out once whatever the number of tries.
async function sendOnce(body) {
  let wait = 400;
  for (let attempt = 1; ; attempt += 1) {
    let result = null;
    try {
      result = await post(body);
    } catch (err) {
      result = null; // no answer at all: the phone lost its connection
    }
    if (result && result.status !== 503 && result.status !== 504) return result;
    document.body.dataset.retries = String(Number(document.body.dataset.retries || 0) + 1);
    notice(`No answer yet (${result ? result.answer.error : "no connection"}); trying again…`);
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(wait * 2, 5000);
  }
}

// ------------------------------------------------------------------ the board

function board(state) {
  const box = $("board");
  if (!state) { box.replaceChildren(el("p", { class: "hint", text: "Waiting for the table's feed…" })); return; }
  const over = state.phase === "game_over";
  const round = state.round ? `${ROUND[state.round[0]] || state.round[0]} ${state.round.slice(1)}` : "";
  const seats = (state.seats || []).map((s) => el("div", { class: `seat ${state.dealer === s.seat ? "dealer" : ""}`,
    "data-seat": s.seat },
  el("div", { class: "who" }, el("b", { text: (s.wind || "")[0] || "" }), s.name),
  el("div", { class: "score", text: points(s.score) })));
  box.replaceChildren(...[
    el("div", { class: "round" }, el("b", { text: over ? "Game over" : state.phase === "not_started" ? "No game" : round }),
      over || state.phase === "not_started" ? null
        : el("span", { text: `${state.honba} honba · ${state.sticks} riichi stick${state.sticks === 1 ? "" : "s"}` })),
    el("div", { class: "seats" }, ...seats),
    over && state.final ? el("ol", { class: "final" }, ...(state.final.ranking || state.final.standings || []).map((r) =>
      el("li", { text: `${seatName(state, r.seat)} ${points(r.points)} (${signed(r.result)})` }))) : null,
  ].filter(Boolean));
}

function historyPanel() {
  const results = (model.results || []).filter((r) => r && r.type === "hand_result");
  const who = names();
  $("history").replaceChildren(el("h2", { text: "Hands" }), results.length
    ? el("ol", {}, ...results.map((r) => el("li", { "data-seq": r.seq ?? "" },
      `${r.hand || ""} ${(r.summary || r.result || "").replace(/\bseat ([0-3])\b/g, (_, s) => who[Number(s)])}`)))
    : el("p", { class: "hint", text: "No hand entered yet." }));
}

function render(m) {
  model = m;
  const state = m.state;
  $("live").textContent = m.connected ? "live" : "reconnecting…";
  board(state);
  historyPanel();
  const phase = state && state.phase;
  $("start").hidden = !(phase === "not_started" || phase === "game_over" || (state && !phase));
  const between = phase === "between_hands";
  $("actions").hidden = !between || draft !== null || pending !== null;
  if (!between && (draft || pending)) { draft = null; pending = null; drawEntry(); drawConfirm(); }
  if (pending && pending !== sending && handNumber() !== pending.event.hand_number) {
    // the hand was entered from another phone while this one was confirming
    pending = null; draft = null;
    drawConfirm(); drawEntry();
    notice("This hand was just entered from another phone: see the scores above.");
    $("actions").hidden = !between;
  }
  if (!token) notice("Scan this table's code to enter results here (ask the referee).");
  document.body.dataset.phase = phase || "";
  document.body.dataset.hand = String(handNumber() ?? "");
}

// ------------------------------------------------------------------ making an entry

function choice(label, pressed, onclick, attrs = {}) {
  return el("button", { type: "button", class: "choice", "aria-pressed": pressed ? "true" : "false", onclick, ...attrs },
    label);
}

function seatChoices(step, selected, onpick, { exclude = [] } = {}) {
  const who = names();
  return el("div", { class: "choices seats", "data-step": step }, ...[0, 1, 2, 3].filter((s) => !exclude.includes(s))
    .map((s) => choice(who[s], selected.includes(s), () => { onpick(s); drawEntry(); }, { "data-seat": s })));
}

function toggle(list, seat) {
  const i = list.indexOf(seat);
  if (i >= 0) list.splice(i, 1); else list.push(seat);
}

function step(title, ...content) {
  return el("div", { class: "step" }, el("h3", { text: title }), ...content);
}

function winBlock(w) {
  const who = names()[w.seat];
  const blocks = [];
  blocks.push(step(`${who}: han`, el("div", { class: "choices numbers", "data-step": `han-${w.seat}` },
    ...HAN.map((h) => choice(String(h), w.han === h && !w.yakuman && !w.photo, () => {
      Object.assign(w, { han: h, yakuman: 0, photo: null }); drawEntry();
    }, { "data-value": h })),
    choice("Yakuman", w.yakuman > 0, () => { Object.assign(w, { yakuman: 1, han: null, fu: null, photo: null }); drawEntry(); },
      { "data-value": "yakuman" }))));
  if (w.han !== null && w.han < 5 && !w.yakuman && !w.photo) {
    blocks.push(step(`${who}: fu`, el("div", { class: "choices numbers", "data-step": `fu-${w.seat}` },
      ...FU.map((f) => choice(String(f), w.fu === f, () => { w.fu = f; drawEntry(); }, { "data-value": f })))));
  }
  const camera = el("input", { type: "file", accept: "image/*", capture: "environment", "data-photo": w.seat });
  camera.addEventListener("change", () => camera.files[0] && readPhoto(w, camera.files[0]));
  blocks.push(step("or show the hand", el("label", { class: "camera" }, w.photo ? "Photo read: take another" : "Photograph the hand", camera)));
  if (w.photo) {
    // the tiles read, each corrected by a tap as on /score: its best guesses, another tile, removed, laid apart as
    // the winning tile; "+" adds a tile the photo missed
    const row = el("div", { class: "row tile-row", "data-read": w.seat, "aria-label": "the tiles read, tap one to correct it" });
    drawRow(row, w.photo, ({ apart }) => { if (apart) w.win_tile = apart; drawEntry(); });
    const unsure = w.photo.tiles.filter((t) => tileState(t) === "unknown" || tileState(t) === "unsure").length;
    blocks.push(row, el("p", { class: "hint", "data-read-status": w.seat,
      text: `${w.photo.tiles.length} tiles` + (unsure ? `, ${unsure} not sure: tap each to say which tile it is` : "") +
        `; winning tile: ${w.win_tile || "the one laid apart (tap a tile to lay it apart)"}` }));
    blocks.push(el("div", { class: "choices" }, ...FLAGS.map(([key, label]) =>
      choice(label, Boolean(w[key]), () => { w[key] = !w[key]; drawEntry(); }, { "data-flag": key }))));
  }
  return el("div", { class: "win-block", "data-winner": w.seat }, ...blocks);
}

async function readPhoto(w, file) {
  notice("Reading the photo…");
  try {
    const response = await fetch("/api/score/read", { method: "POST", body: file,
      headers: { "Content-Type": file.type || "application/octet-stream" } });
    const reading = await response.json();
    if (!response.ok) throw new Error(reading.error || `the server answered ${response.status}`);
    if (reading.problem) throw new Error(reading.problem);
    w.photo = prepare(reading);
    Object.assign(w, { han: null, fu: null, yakuman: 0, win_tile: "" });
    const unsure = reading.tiles.filter((t) => tileState(t) === "unknown" || tileState(t) === "unsure").length;
    notice(unsure ? `${unsure} tile(s) not sure: tap each to correct it` : `${reading.tiles.length} tiles read`, !unsure);
  } catch (err) {
    notice(`The photo could not be read: ${err.message}`);
  }
  document.body.dataset.photos = String(Number(document.body.dataset.photos || 0) + 1);
  drawEntry();
}

function drawEntry() {
  const box = $("entry");
  if (!draft) { box.hidden = true; box.replaceChildren(); return; }
  box.hidden = false;
  const d = draft;
  const parts = [el("h2", { text: { ron: "Ron", tsumo: "Tsumo", draw: "Draw", chombo: "Chombo", abort: "Abortive draw" }[d.kind] })];
  if (d.kind === "ron") {
    parts.push(step("Dealt in by", seatChoices("from", d.from === null ? [] : [d.from], (s) => {
      d.from = s; d.wins = d.wins.filter((w) => w.seat !== s);
    })));
    parts.push(step("Won by (two for a double ron)", seatChoices("winners", d.wins.map((w) => w.seat), (s) => {
      const i = d.wins.findIndex((w) => w.seat === s);
      if (i >= 0) d.wins.splice(i, 1); else d.wins.push(newWin(s));
    }, { exclude: d.from === null ? [] : [d.from] })));
  } else if (d.kind === "tsumo") {
    parts.push(step("Won by", seatChoices("winners", d.wins.map((w) => w.seat), (s) => { d.wins = [newWin(s)]; })));
  } else if (d.kind === "draw") {
    parts.push(step("Tenpai", seatChoices("tenpai", d.tenpai, (s) => toggle(d.tenpai, s))));
    if (model.state && model.state.rules !== "ema2016" && model.state.rules !== "ema2025") {
      parts.push(step("Nagashi mangan", seatChoices("nagashi", d.nagashi, (s) => toggle(d.nagashi, s))));
    }
  } else if (d.kind === "chombo") {
    parts.push(step("By", seatChoices("offender", d.seat === null ? [] : [d.seat], (s) => { d.seat = s; })));
  } else if (d.kind === "abort") {
    parts.push(step("Which", el("div", { class: "choices", "data-step": "abort" }, ...ABORTS.map(([k, label]) =>
      choice(label, d.abort === k, () => { d.abort = k; drawEntry(); }, { "data-value": k })))));
    if (d.abort === "nine_terminals") parts.push(step("Declared by", seatChoices("offender", d.seat === null ? [] : [d.seat], (s) => { d.seat = s; })));
  }
  if (d.kind !== "chombo") parts.push(step("Riichi declared", seatChoices("riichi", d.riichi, (s) => toggle(d.riichi, s))));
  for (const w of d.wins) parts.push(winBlock(w));
  if (d.wins.some((w) => w.photo)) {
    const dora = el("input", { name: "dora", placeholder: "dora indicators, e.g. 3m 7p", value: d.dora, autocomplete: "off" });
    dora.addEventListener("input", () => { d.dora = dora.value; });
    const ura = el("input", { name: "ura", placeholder: "ura dora indicators (riichi)", value: d.ura, autocomplete: "off" });
    ura.addEventListener("input", () => { d.ura = ura.value; });
    parts.push(step("Dora", dora, ura));
  }
  parts.push(el("div", { class: "row-buttons" },
    el("button", { type: "button", onclick: () => { draft = null; drawEntry(); render(model); } }, "Cancel"),
    el("button", { type: "button", class: "primary", id: "check", onclick: check }, "Check payments")));
  box.replaceChildren(...parts);
}

function newWin(seat) {
  return { seat, han: null, fu: null, yakuman: 0, photo: null, win_tile: "" };
}

function tiles(text) {
  return (text || "").split(/[\s,]+/).filter(Boolean).join("");
}

function eventOf(d) {
  const hand_number = handNumber();
  if (d.kind === "chombo") return { type: "chombo_entry", seat: d.seat, hand_number };
  if (d.kind === "draw") {
    return { type: "draw_entry", tenpai: [0, 1, 2, 3].map((s) => d.tenpai.includes(s)), riichi: d.riichi,
      nagashi: d.nagashi, hand_number };
  }
  if (d.kind === "abort") {
    return { type: "abort_entry", kind: d.abort, seat: d.abort === "nine_terminals" ? d.seat : null, riichi: d.riichi,
      hand_number };
  }
  const wins = d.wins.map((w) => {
    const win = { seat: w.seat };
    for (const [key] of FLAGS) if (w[key]) win[key] = true;
    if (w.photo) win.photo = { groups: laidGroups(w.photo), win: w.win_tile || null };
    else if (w.yakuman) win.yakuman = w.yakuman;
    else Object.assign(win, { han: w.han, fu: w.han !== null && w.han < 5 ? w.fu : null });
    return win;
  });
  return { type: "win_entry", from_seat: d.kind === "ron" ? d.from : null, wins, riichi: d.riichi,
    dora: tiles(d.dora), ura: tiles(d.ura), hand_number };
}

async function check() {
  let result;
  try {
    result = await post({ action: "preview", event: eventOf(draft) });
  } catch (err) {
    notice("No connection: check again in a moment."); return;
  }
  if (result.status !== 200) { notice(result.answer.error || "refused"); return; }
  notice("");
  const event = result.answer.event;
  pending = { event, key: randomKey(), preview: result.answer, draft };
  drawConfirm();
}

function drawConfirm() {
  const box = $("confirm");
  $("entry").hidden = Boolean(pending) || !draft; // the payments replace the entry until confirmed or taken back
  if (!pending) { box.hidden = true; box.replaceChildren(); return; }
  const p = pending.preview;
  const who = names();
  box.hidden = false;
  const rows = [0, 1, 2, 3].map((s) => {
    const d = p.deltas[s];
    return el("li", { "data-seat": s }, el("span", {}, who[s],
      p.deposits.includes(s) ? el("span", { class: "stick", text: "put a riichi stick down" }) : null),
    el("span", { class: d > 0 ? "up" : d < 0 ? "down" : "", text: d > 0 ? `receives ${points(d)}` : d < 0 ? `pays ${points(-d)}` : "—" }));
  });
  const yaku = p.wins.map((w) => `${who[w.seat]}: ${w.limit || `${w.han} han ${w.fu} fu`}${w.yaku.length ? ` (${w.yaku.map((y) => `${y.name} ${y.han}`).join(", ")})` : ""} = ${points(w.points)}`);
  box.replaceChildren(...[el("h2", { text: "Payments" }),
    el("p", { class: "confirm-text", text: p.text.replace(/\bseat ([0-3])\b/g, (_, s) => who[Number(s)]) }),
    ...yaku.map((t) => el("p", { class: "confirm-text", text: t })),
    el("ul", { class: "payments" }, ...rows),
    p.game_over ? el("p", { class: "confirm-text", text: "This hand ends the game." }) : null,
    el("div", { class: "row-buttons" },
      el("button", { type: "button", onclick: () => { pending = null; drawConfirm(); drawEntry(); } }, "Back"),
      el("button", { type: "button", class: "primary", id: "confirm-button", onclick: confirm }, "Confirm"))].filter(Boolean));
  box.scrollIntoView({ block: "start" });
}

async function confirm() {
  const sent = pending;
  if (!sent || sending) return;
  sending = sent;
  $("confirm-button").disabled = true;
  const { status, answer } = await sendOnce({ action: "enter", key: sent.key, event: sent.event });
  sending = null;
  if (pending === sent) pending = null;
  if (draft === sent.draft) draft = null;
  drawConfirm(); drawEntry();
  if (status === 200) notice(`Entered: ${sent.preview.text.replace(/\bseat ([0-3])\b/g, (_, s) => names()[Number(s)])}`, true);
  else if (status === 409) notice(`Already entered from another phone: ${answer.error}`);
  else notice(answer.error || "refused");
  document.body.dataset.entered = String(Number(document.body.dataset.entered || 0) + (status === 200 ? 1 : 0));
  render(model);
}

for (const b of document.querySelectorAll("#actions button")) {
  b.addEventListener("click", () => {
    draft = { kind: b.dataset.kind, riichi: [], wins: [], from: null, tenpai: [], nagashi: [], seat: null, abort: null,
      dora: "", ura: "" };
    notice("");
    drawEntry();
    render(model);
  });
}

$("start-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const form = ev.target;
  const players = [0, 1, 2, 3].map((i) => form.elements[`p${i}`].value.trim());
  $("start-button").disabled = true;
  const { status, answer } = await sendOnce({ action: "start", key: randomKey(), players });
  $("start-button").disabled = false;
  notice(status === 200 ? `Game started: ${players.join(", ")}` : (answer.error || "refused"), status === 200);
});

for (let i = 0; i < 4; i += 1) $("start-form").elements[`p${i}`].placeholder = WINDS[i];
connect(`/sse/table/${base}`, {}, render);
