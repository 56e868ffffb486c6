// The referee console: the table page plus commands, sent by the web server on the table's `cmd` topic
// (docs/mqtt.md); every reply is listed. Click a discard to amend it.
import { connect, el, seatName } from "/static/feed.js";
import { base, renderTablePage, site, table } from "/static/tablepage.js";

const app = document.getElementById("app");
const model = {};
const replies = [];
let csrf = null;
let me = null; // the signed-in referee's name
let selected = null; // {seat, index, tile, seq}
let keep = {}; // form values across re-renders

async function session() {
  const r = await fetch("/api/session", { credentials: "same-origin" });
  const s = await r.json();
  csrf = s.csrf;
  me = s.name;
}

export async function send(command) {
  const r = await fetch(`/api/cmd/${base}`, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf || "" },
    body: JSON.stringify(command),
  });
  let reply;
  try { reply = await r.json(); } catch { reply = { status: "error", error: `HTTP ${r.status}` }; }
  if (r.status === 403 && !reply.by) me = null; // signed out or the session ended: say so, offer to sign in
  replies.unshift({ command: command.command, reply, at: new Date().toLocaleTimeString() });
  render(model);
  return reply;
}

function input(name, attrs = {}) {
  const e = el("input", { name, value: keep[name] ?? attrs.value ?? "", ...attrs });
  e.addEventListener("input", () => { keep[name] = e.value; });
  return e;
}

function select(name, options, fallback) {
  const s = el("select", { name }, ...options.map(([value, text]) => el("option", { value, text })));
  s.value = keep[name] ?? fallback;
  s.addEventListener("change", () => { keep[name] = s.value; });
  return s;
}

function seatSelect(name) {
  return select(name, [0, 1, 2, 3].map((i) => [String(i), seatName(model.state, i)]), "0");
}

// the start-anywhere situation of start_game (docs/mqtt.md): each field is sent only when filled; what is sent
// replaces the table's configured [start] as a whole (a field left empty takes the engine's default)
const ROUNDS = ["E", "S", "W", "N"].flatMap((w) => [1, 2, 3, 4].map((n) => `${w}${n}`));

function situationFields() {
  const who = (i) => keep[`p${i}`] || seatName(model.state, i);
  return el("fieldset", { class: "situation" },
    el("legend", { text: "Take the game up at (optional)" }),
    select("start_round", [["", "round…"], ...ROUNDS.map((r) => [r, r])], ""),
    input("start_honba", { class: "count", type: "number", min: 0, step: 1, placeholder: "honba" }),
    input("start_sticks", { class: "count", type: "number", min: 0, step: 1, placeholder: "sticks" }),
    ...[0, 1, 2, 3].map((i) => input(`start_score${i}`, { class: "score", type: "number", step: 100,
      placeholder: `score: ${who(i)}` })),
    select("start_dealer", [["", "dealer…"], ...[0, 1, 2, 3].map((i) => [String(i), `dealer: ${who(i)}`])], ""),
    el("p", { class: "hint", text: "Leave empty to start as the table is configured. Filled fields are sent "
      + "and replace that configuration as a whole: an empty one takes its default (East 1, the dealer the "
      + "round implies, no counters or sticks, the rules' starting points)." }));
}

function startCommand(d) {
  const c = { command: "start_game", players: [0, 1, 2, 3].map((i) => String(d.get(`p${i}`) || "").trim()),
    rules: String(d.get("rules") || "ema2012") };
  const filled = (k) => String(d.get(k) ?? "").trim();
  if (filled("start_round")) c.round = filled("start_round");
  for (const k of ["honba", "sticks"]) if (filled(`start_${k}`)) c[k] = Number(filled(`start_${k}`));
  const scores = [0, 1, 2, 3].map((i) => filled(`start_score${i}`));
  // a score left empty among others is sent as null: the service refuses the command and says why
  if (scores.some((v) => v !== "")) c.scores = scores.map((v) => (v === "" ? null : Number(v)));
  if (filled("start_dealer")) c.dealer = Number(filled("start_dealer"));
  return c;
}

// the referee's ruling on a difference between the score sticks and the game: the sticks are wrong (the players fix
// their trays), look again, or the game is wrong (the scores from the trays, one click); nothing else changes scores
function sticksActions(m) {
  const s = m.sticks;
  if (!s || !s.trays) return null;
  const buttons = [];
  if (s.status === "mismatch" || s.status === "waiting") {
    buttons.push(el("button", { class: "sticks-dismiss", onclick: () => send({ command: "sticks", action: "dismiss" }),
      text: "Sticks are wrong: players fix their trays" }));
  }
  buttons.push(el("button", { class: "sticks-recheck", onclick: () => send({ command: "sticks", action: "recheck" }),
    text: "Recheck" }));
  if (s.status === "mismatch" && m.state && m.state.phase !== "not_started") {
    buttons.push(el("button", { class: "sticks-take danger", onclick: () => send({ command: "set_scores", scores: s.trays,
      reason: "scores from the trays" }), text: "Game is wrong: scores from the trays" }));
  }
  return el("div", { class: "row sticks-actions" }, ...buttons);
}

// ``ask(data)``: the question a referee answers before the command goes (a chombo, time up); Cancel sends nothing
function form(cls, fields, label, build, danger = false, ask = null) {
  const f = el("form", { class: cls }, ...fields, el("button", { type: "submit", class: danger ? "danger" : "", text: label }));
  f.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const d = new FormData(f);
    if (ask && !window.confirm(ask(d))) return;
    send(build(d));
  });
  return f;
}

function askTimeUp() {
  return window.confirm(`Time up now at ${site}/${table}? The hand in play ends the game as the clock's rule says; `
    + "other tables keep their time.");
}

function askChombo(d) {
  const seat = Number(d.get("chombo_seat"));
  const reason = String(d.get("chombo_reason") || "").trim();
  return `Chombo for ${seatName(model.state, seat)}${reason ? ` (${reason})` : ""}? The hand ends and the chombo `
    + "penalty is applied as the rules say.";
}

// the table's alerts of this game (a refusal, a chombo, a red five under rules without them), newest first
function alertList() {
  const alerts = (model.alerts || []).slice(-8).reverse();
  if (!alerts.length) return null;
  return el("div", { class: "table-alerts" }, el("h2", { text: "Alerts" }),
    el("ul", { class: "alerts" }, ...alerts.map((a) => el("li", { class: a.kind, "data-kind": a.kind, text: a.text }))));
}

// every penalty by seat on the console's player list: this game's chombos (from the feed) and, at a tournament
// table, the tournament's penalties and warnings for the player (window.tablesvcTournament, tournament-console.js)
function penaltyNotes(m) {
  const tournament = window.tablesvcTournament || null;
  [0, 1, 2, 3].forEach((seat) => {
    const card = app.querySelector(`.players .player[data-seat='${seat}']`);
    if (!card) return;
    const notes = [];
    const chombos = (m.results || []).filter((r) => r && r.result === "chombo" && r.chombo === seat);
    if (chombos.length) notes.push(`chombo ×${chombos.length} (${chombos.map((r) => r.hand || "?").join(", ")})`);
    for (const p of (tournament && tournament.penalties && tournament.penalties[seat]) || []) {
      notes.push(p.kind === "warning" ? `warning, round ${p.round}: ${p.reason}`
        : `penalty −${(p.points / 1000).toFixed(1)}, round ${p.round}: ${p.reason}`);
    }
    if (tournament && tournament.chombo && tournament.chombo[seat]) {
      notes.push(`tournament chombo −${(tournament.chombo[seat] / 1000).toFixed(1)} (in the games)`);
    }
    if (notes.length) card.append(el("ul", { class: "penalty-notes" }, ...notes.map((n) => el("li", { text: n }))));
  });
}

// the tournament clock of this table: more time or one more hand for it alone (shown under its countdown)
function clockControls(clock, phase) {
  if (phase === "game_over") return null;
  return el("div", { class: "clock-buttons" },
    form("clock-extend", [input("extend_minutes", { class: "count", type: "number", min: 1, step: 1, value: "5" }),
      el("span", { text: "min" }), input("extend_reason", { placeholder: "reason" })], "Extend",
    (d) => ({ command: "clock", action: "extend", minutes: Number(d.get("extend_minutes")),
      reason: String(d.get("extend_reason") || "") })),
    el("button", { class: "add-hand", onclick: () => send({ command: "clock", action: "add_hand" }), text: "Add hand" }),
    el("button", { class: "time-up danger", onclick: () => { if (askTimeUp()) send({ command: "clock", action: "time_up",
      reason: "called by the referee" }); }, text: "Time up now" }));
}

// a table playing without a clock: start one (a tournament's round start sends it with start_game)
function clockStart() {
  if (!model.state || model.state.clock || ["not_started", "game_over"].includes(model.state.phase)) return null;
  return form("clock-start", [input("clock_minutes", { class: "count", type: "number", min: 1, step: 1, value: "75" }),
    el("span", { text: "min, then" }),
    select("clock_rule", [["ema", "the hand in play and one more (EMA)"], ["finish_hand", "the hand in play"]], "ema")],
  "Start clock", (d) => ({ command: "clock", action: "start", minutes: Number(d.get("clock_minutes")),
    rule: String(d.get("clock_rule") || "ema") }));
}

function controls() {
  const names = [0, 1, 2, 3].map((i) => input(`p${i}`, { class: "name",
    value: model.state?.seats?.[i]?.name || ["East", "South", "West", "North"][i] }));
  const scores = [0, 1, 2, 3].map((i) => input(`s${i}`, { class: "score", type: "number", step: 100,
    value: model.state?.seats?.[i]?.score ?? "" }));
  const amend = el("form", { class: `amend-box ${selected ? "open" : ""}` },
    el("span", { text: selected ? `${seatName(model.state, selected.seat)}'s discard ${selected.index + 1} (${selected.tile}) was really:` : "" }),
    input("amend_tile", { class: "score", placeholder: "6p" }),
    el("button", { type: "submit", text: "Amend" }),
    el("button", { type: "button", onclick: () => { selected = null; render(model); }, text: "Cancel" }));
  amend.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (!selected || !selected.seq) return;
    const tile = (keep.amend_tile || "").trim();
    send({ command: "amend", seq: selected.seq, event: { type: "discard", seat: selected.seat, tile, riichi: !!selected.riichi } });
    selected = null; keep.amend_tile = "";
  });
  const who = me
    ? el("div", { class: "signed-in" }, el("span", {}, "signed in as ", el("b", { class: "referee-name", text: me })),
      el("form", { method: "post", action: "/logout", class: "logout" }, el("input", { type: "hidden", name: "csrf", value: csrf || "" }),
        el("button", { type: "submit", text: "Sign out" })))
    : el("div", { class: "signed-in" }, el("a", { href: `/login?next=${encodeURIComponent(location.pathname)}`, text: "Sign in again" }));
  return el("div", { class: "panel commands" }, el("h2", { text: "Referee console" }), who,
    el("p", { class: "hint", text: "Click a discard on the table to amend it." }), amend,
    clockStart(),
    form("start", [...names, input("rules", { value: model.state?.rules || "ema2012", class: "name" }), situationFields()],
      "Start game", startCommand),
    model.sticks ? el("div", { class: "row" }, el("button", { class: "start-from-sticks", onclick: () => {
      const f = document.querySelector("form.start");
      send({ ...startCommand(new FormData(f)), scores: "sticks" });
    }, text: "Start game with the scores in the trays" })) : null,
    el("div", { class: "row" },
      el("button", { class: "undo", onclick: () => send({ command: "undo", count: 1 }), text: "Undo last event" })),
    form("chombo", [seatSelect("chombo_seat"), input("chombo_reason", { placeholder: "reason" })], "Chombo",
      (d) => ({ command: "chombo", seat: Number(d.get("chombo_seat")), reason: String(d.get("chombo_reason") || "") }), true,
      askChombo),
    form("dead-hand", [seatSelect("dead_seat"), input("dead_reason", { placeholder: "reason" })], "Dead hand",
      (d) => ({ command: "dead_hand", seat: Number(d.get("dead_seat")), reason: String(d.get("dead_reason") || "") }), true),
    form("set-scores", [...scores, input("scores_reason", { placeholder: "reason" })], "Set scores", (d) => ({
      command: "set_scores", scores: [0, 1, 2, 3].map((i) => Number(d.get(`s${i}`))), reason: String(d.get("scores_reason") || "") })),
    form("end-game", [input("end_reason", { placeholder: "reason (time limit…)" })], "End game",
      (d) => ({ command: "end_game", reason: String(d.get("end_reason") || "") }), true),
    alertList(),
    el("h2", { text: "Replies" }),
    el("ul", { class: "replies" }, ...replies.map((r) => el("li", { class: r.reply.status === "ok" ? "ok" : "error" },
      `${r.at} ${r.command}: ${r.reply.status}${r.reply.error ? ` — ${r.reply.error}` : r.reply.data ? ` ${JSON.stringify(r.reply.data)}` : ""}${r.reply.by ? ` (by ${r.reply.by})` : ""}`))));
}

function onDiscard(seat, index, t, seq) {
  selected = { seat, index, tile: t.tile, riichi: t.riichi, seq };
  if (!seq) replies.unshift({ command: "amend", at: new Date().toLocaleTimeString(),
    reply: { status: "error", error: "this discard's journal number is unknown (the web server joined mid-hand)" } });
  render(model);
}

function render(m) {
  const focused = document.activeElement && document.activeElement.name;
  renderTablePage(app, m, { onDiscard, extra: controls(), clockExtra: clockControls, sticksActions });
  penaltyNotes(m);
  if (selected) {
    const node = app.querySelector(`.pond[data-seat='${selected.seat}'] .tile[data-index='${selected.index}']`);
    if (node) node.classList.add("selected");
  }
  if (focused) { const f = app.querySelector(`[name='${focused}']`); if (f) f.focus(); }
}

window.tablesvcReferee = { send, render: () => { if (model.state) render(model); } };
session().then(() => connect(`/sse/table/${base}`, model, render));
export { site, table };
