// The tournament's pages: one Server-Sent Events stream (/sse/tournament) pushes the whole tournament whenever
// it changes; each page draws its view of it (body[data-view]): seating, standings, player, overlay.
import { el } from "/static/feed.js";

const view = document.body.dataset.view;
const main = document.getElementById("main");
const live = document.getElementById("live");
const WINDS = ["E", "S", "W", "N"];
const params = new URLSearchParams(location.search);
let latest = null;
let referee = null;
let panel = null; // the referee's forms: built once, so a push does not wipe what is being typed

const thousands = (v) => (typeof v === "number" ? (v > 0 ? "+" : v < 0 ? "−" : "±") + Math.abs(v / 1000).toFixed(1) : "");
const cls = (v) => (v > 0 ? "up" : v < 0 ? "down" : "");

const WIND_NAMES = ["East", "South", "West", "North"];
// a name as typed on a phone: no accents, no case ("Ó Briain" is found by "o briain", "briain")
const fold = (s) => String(s || "").normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().trim();

function shownTables(data) {
  return data.tables.filter((t) => t.round === data.shown_round);
}

function roundOf(data, n) {
  return data.rounds.find((r) => r.number === n) || null;
}

function tableState(data, t) {
  const r = roundOf(data, t.round);
  if (!r || r.status === "seated") return ["seated", "seated"];
  if (r.status === "started" && !r.started_tables.includes(t.table)) return ["not-started", "NOT STARTED"];
  if (t.status === "finished") return ["finished", "finished"];
  return ["in-play", t.status === "in play" ? "in play" : "started"];
}

function tableCard(data, t, me = null) {
  const [state, label] = tableState(data, t);
  return el("section", { class: `hall-table ${state}`, "data-table": String(t.table), "data-state": state },
    el("div", { class: "head" }, el("span", { class: "number", text: String(t.table) }),
      el("span", { class: "where", text: `${t.site}/${t.table_id}` }), el("span", { class: "state", text: label })),
    el("div", { class: "seats" }, ...t.seats.flatMap((s, i) => [
      el("span", { class: "wind", text: WINDS[i] }),
      el("span", { class: s.player === me ? "name me" : "name", text: s.name }),
      el("span", { class: "result", text: s.result === null ? "" : `${s.place}. ${thousands(s.result)}` })])));
}

function header(data) {
  document.getElementById("title").textContent = data.tournament.name;
  const r = roundOf(data, data.shown_round);
  const title = document.getElementById("round-title");
  if (title) title.textContent = r ? `round ${r.number} of ${data.tournament.rounds} — ${r.status}` : "no round seated yet";
}

function seatingView(data) {
  header(data);
  const tables = shownTables(data);
  const r = roundOf(data, data.shown_round);
  const parts = [];
  if (r && r.offline_tables.length) {
    parts.push(el("p", { class: "problem", id: "offline", text: `Not started: table ${r.offline_tables.join(", ")} — ` +
      "the table's service did not answer; start it and send the round again (--retry)." }));
  }
  parts.push(tables.length ? el("div", { class: "hall" }, ...tables.map((t) => tableCard(data, t)))
    : el("p", { class: "empty", text: "No round is seated yet." }));
  if (referee) parts.push(panel || (panel = refereePanel(data)));
  return parts;
}

function standingsTable(data, rows) {
  const head = ["#", "Player", "Country", "Games", "1st", "2nd", "3rd", "4th", "Penalties", "Total"];
  return el("table", { class: "ranking", id: "ranking" },
    el("thead", {}, el("tr", {}, ...head.map((h, i) => el("th", { class: i >= 3 ? "num" : "", text: h })))),
    el("tbody", {}, ...rows.map((p) => el("tr", { class: p.place === null ? "sub" : "", "data-player": p.name },
      el("td", { text: p.place === null ? "sub" : String(p.place) }), el("td", { class: "name", text: p.name }),
      el("td", { text: p.country || "" }), el("td", { class: "num", text: String(p.games) }),
      ...p.places.map((n) => el("td", { class: "num", text: String(n) })),
      el("td", { class: "num down", text: p.penalties ? thousands(-p.penalties) : "" }),
      el("td", { class: `num total ${cls(p.total)}`, text: thousands(p.total) })))));
}

function standingsView(data) {
  header(data);
  const finished = data.tables.filter((t) => t.status === "finished").length;
  const parts = [el("p", { class: "hint", text: `${finished} of ${data.tables.length} games in; ties broken by ` +
    `${data.tournament.tie_break.replace("_", " ")}; substitutes are not ranked.` }),
    standingsTable(data, data.players)];
  if (data.penalties.length) {
    parts.push(el("ul", { class: "penalties" }, ...data.penalties.map((p) => el("li", {
      text: `Round ${p.round}: ${p.name} — ${p.kind}${p.points ? ` ${thousands(-p.points)}` : ""}: ${p.reason}` +
        (p.hand ? ` (hand ${p.hand})` : "") }))));
  }
  return parts;
}

function playerView(data) {
  header(data);
  const input = el("input", { id: "who", list: "names", placeholder: "your name", value: params.get("player") || "" });
  const list = el("datalist", { id: "names" }, ...data.players.map((p) => el("option", { value: p.name })));
  const form = el("form", { class: "finder", onsubmit: (e) => {
    e.preventDefault();
    params.set("player", input.value.trim());
    history.replaceState(null, "", `?${params}`);
    render(latest);
  } }, input, list, el("button", { type: "submit", text: "Find my table" }));
  const who = fold(params.get("player"));
  const parts = [form];
  if (who) {
    // the whole name or EMA number first; else every player whose name holds what was typed, accents optional
    const exact = data.players.filter((x) => fold(x.name) === who || fold(x.ema_id) === who);
    const found = exact.length ? exact : data.players.filter((x) => fold(x.name).includes(who));
    const p = found.length === 1 ? found[0] : null;
    const t = p && shownTables(data).find((x) => x.seats.some((s) => s.player === p.number));
    if (found.length > 1) {
      parts.push(el("p", { class: "problem", text: `${found.length} players match “${params.get("player")}”:` }),
        el("ul", { class: "matches" }, ...found.map((x) => el("li", {}, el("a", {
          href: `?${new URLSearchParams({ ...Object.fromEntries(params), player: x.name })}`, text: x.name })))));
    } else if (!p) parts.push(el("p", { class: "problem", text: `No player called “${params.get("player")}”.` }));
    else if (!t) parts.push(el("p", { class: "your-table", text: `${p.name}: not seated in round ${data.shown_round}.` }));
    else {
      const seat = t.seats.findIndex((s) => s.player === p.number);
      parts.push(el("p", { class: "your-table", id: "your-table" }, `${p.name}, round ${t.round}: `,
        el("b", { text: `table ${t.table}` }), `, seat ${WIND_NAMES[seat]}`));
      const next = data.tables.find((x) => x.round === t.round + 1 && x.seats.some((s) => s.player === p.number));
      parts.push(el("p", { class: "your-next", id: "your-next" }, next
        ? `Next, round ${next.round}: table ${next.table}, seat ${WIND_NAMES[next.seats.findIndex((s) => s.player === p.number)]}`
        : "No next round seated yet."));
      parts.push(el("div", { class: "hall" }, tableCard(data, t, p.number)));
    }
    if (p) {
      const mine = data.penalties.filter((x) => x.player === p.number);
      parts.push(el("p", { class: "your-standing", id: "your-standing" },
        `${p.place === null ? "Substitute (not ranked)" : `Place ${p.place}`} · total ${(p.total / 1000).toFixed(1)}`
        + ` · ${p.games} game(s)` + (p.penalties ? ` · penalties −${(p.penalties / 1000).toFixed(1)}` : "")
        + (p.chombo ? ` · chombo −${(p.chombo / 1000).toFixed(1)} (in the games)` : "")
        + (mine.length ? ` · ${mine.map((x) => `${x.kind}: ${x.reason}`).join("; ")}` : "")));
    }
  }
  return parts;
}

function overlayView(data) {
  const top = Number(params.get("top") || 8);
  const streamed = Number(params.get("table") || 1);
  const at = new Set((shownTables(data).find((t) => t.table === streamed) || { seats: [] }).seats.map((s) => s.player));
  const rows = data.players.filter((p) => p.place !== null).slice(0, top);
  return [el("section", { class: "overlay-standings", id: "overlay-standings" },
    el("h2", {}, "Standings", el("small", { text: data.shown_round ? `after round ${Math.max(0,
      ...data.rounds.filter((r) => r.status === "finished").map((r) => r.number))}` : "" })),
    ...rows.map((p) => el("div", { class: at.has(p.number) ? "row at-table" : "row", "data-player": p.name },
      el("span", { class: "place", text: String(p.place) }), el("span", { class: "name", text: p.name }),
      el("span", { class: `total ${cls(p.total)}`, text: thousands(p.total) }))))];
}

async function post(path, body) {
  const response = await fetch(path, { method: "POST", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json", "X-CSRF-Token": referee.csrf || "" } });
  const answer = await response.json().catch(() => ({ status: "error", error: `HTTP ${response.status}` }));
  return answer;
}

function describe(d) {
  // a referee's call as one line: what was given to whom, or which tables started
  if (d.kind) {
    const p = (latest && latest.players.find((x) => x.number === d.player)) || { name: `player ${d.player}` };
    return `Given: ${d.kind} ${d.id} to ${p.name}, round ${d.round}` + (d.points ? `, ${thousands(-d.points)}` : "") +
      `: ${d.reason}` + (d.hand ? ` (hand ${d.hand})` : "");
  }
  const missing = Object.entries(d.not_started || {}).map(([t, why]) => `table ${t}: ${why}`);
  return `Round ${d.round}: started table ${d.started.join(", ") || "none"}` +
    (missing.length ? `; NOT STARTED: ${missing.join("; ")}` : "");
}

function refereePanel(data) {
  const out = el("div", { class: "answer", id: "referee-answer" });
  const say = (a) => { out.textContent = a.status === "error" ? `Refused: ${a.error}` : describe(a.data); };
  const next = data.rounds.find((r) => r.status !== "finished");
  const roundInput = el("input", { name: "round", type: "number", min: "1", value: next ? String(next.number) : "1" });
  const start = el("form", { id: "start-form", onsubmit: async (e) => {
    e.preventDefault();
    say(await post("/api/tournament/start-round", { round: Number(roundInput.value), retry: retry.checked }));
  } }, el("label", {}, "Round ", roundInput));
  const retry = el("input", { type: "checkbox", name: "retry" });
  start.append(el("label", {}, retry, " only the tables not started"), el("button", { type: "submit", text: "Start round" }));
  const f = (name, attrs = {}) => el("input", { name, ...attrs });
  const kind = el("select", { name: "kind" }, el("option", { value: "penalty", text: "penalty" }),
    el("option", { value: "warning", text: "warning" }));
  const penalty = el("form", { id: "penalty-form", onsubmit: async (e) => {
    e.preventDefault();
    const d = new FormData(penalty);
    say(await post("/api/tournament/penalty", { player: d.get("player"), points: Number(d.get("points") || 0),
      reason: d.get("reason"), hand: d.get("hand") || null, kind: d.get("kind"),
      table: d.get("table") ? Number(d.get("table")) : null }));
  } }, el("label", {}, "Player ", f("player", { placeholder: "name, number or EMA id" })),
  el("label", {}, "Table ", f("table", { type: "number", min: "1", style: "width:6rem" })), kind,
  el("label", {}, "Points ", f("points", { type: "number", min: "0", step: "100", style: "width:9rem" })),
  el("label", {}, "Reason ", f("reason")), el("label", {}, "Hand ", f("hand", { placeholder: "E3-1", style: "width:7rem" })),
  el("button", { type: "submit", text: "Give" }));
  return el("section", { class: "referee-panel", id: "referee-panel" }, el("h2", { text: "Referee" }), start, penalty, out);
}

const VIEWS = { seating: seatingView, standings: standingsView, player: playerView, overlay: overlayView };

function render(data) {
  if (!data) return;
  main.replaceChildren(...VIEWS[view](data));
  document.body.dataset.games = String(data.tables.filter((t) => t.status === "finished").length);
  document.body.dataset.penalties = String(data.penalties.length);
  document.body.dataset.shown = String(data.shown_round || "");
  document.body.dataset.updated = String(Date.now());
}

async function start() {
  if (view !== "overlay") {
    try { referee = await (await fetch("/api/session")).json(); if (!referee.referee) referee = null; } catch { referee = null; }
  }
  const source = new EventSource("/sse/tournament");
  source.addEventListener("tournament", (e) => {
    latest = JSON.parse(e.data);
    if (live) live.textContent = `live · ${new Date().toLocaleTimeString()}`;
    render(latest);
  });
  source.addEventListener("problem", (e) => {
    const p = JSON.parse(e.data);
    main.replaceChildren(el("p", { class: "problem", id: "problem", text: p.error }));
  });
  source.onerror = () => { if (live) live.textContent = "reconnecting…"; };
}

start();
