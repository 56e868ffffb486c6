// The tournament's pages: one Server-Sent Events stream (/sse/tournament) pushes the whole tournament whenever
// it changes; each page draws its view of it (body[data-view]): seating, standings, player, overlay.
import { el } from "/static/feed.js";
import { countdown, remaining } from "/static/clock.js";

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

// time left in a round, from its one deadline (the web server's time): "43:12", "time" once it has passed
function timeLeft(r) {
  if (!r || r.status !== "started" || !r.deadline) return null;
  const left = remaining({ deadline: r.deadline });
  return left > 0 ? countdown(left) : "time";
}

// an element that counts down to the round's deadline by itself (the ticker below), with no re-render
function timeBox(r, attrs = {}) {
  return el("span", { ...attrs, class: `time-left ${attrs.class || ""}`.trim(), "data-deadline": r.deadline,
    text: timeLeft(r) || "" });
}

function nextRoundText(data, r) {
  if (!r) return "";
  if (r.number >= data.tournament.rounds) return "last round";
  const next = roundOf(data, r.number + 1);
  return `next: round ${r.number + 1}${next ? "" : " (not seated yet)"}`;
}

// the big screen's header: round, time left, next round; readable across the hall
function bigHeader(data, r) {
  const total = data.tournament.rounds;
  const state = !r ? "no round seated yet" : r.status === "seated" ? `round ${r.number} of ${total} · starts soon`
    : r.status === "started" ? `round ${r.number} of ${total}` : `round ${r.number} of ${total} · finished`;
  return el("div", { class: "big-head", id: "big-head" },
    el("span", { class: "big-name", id: "big-name", text: data.tournament.name }),
    el("span", { class: "big-round", id: "big-round", text: state }),
    r && r.status === "started" && r.deadline ? timeBox(r, { id: "big-time", class: "big-time" })
      : el("span", { class: "big-time", id: "big-time", text: "" }),
    el("span", { class: "big-next", id: "big-next", text: nextRoundText(data, r) }));
}

// the players of the round, A to Z by family name (the imported last name, else the last word), with table and wind
function indexRows(data, tables) {
  const rows = [];
  for (const t of tables) {
    t.seats.forEach((s, i) => {
      const p = data.players.find((x) => x.number === s.player) || {};
      const last = p.last_name || String(s.name).trim().split(/\s+/).pop();
      rows.push({ key: `${fold(last)} ${fold(s.name)}`, name: s.name, table: t.table, wind: WINDS[i] });
    });
  }
  return rows.sort((a, b) => a.key.localeCompare(b.key));
}

let fitKey = "";
let indexPage = 0;

function seatingView(data) {
  header(data);
  const tables = shownTables(data).sort((a, b) => a.table - b.table);
  const r = roundOf(data, data.shown_round);
  const parts = [bigHeader(data, r)];
  if (r && r.offline_tables.length) {
    parts.push(el("p", { class: "problem", id: "offline", text: `Not started: table ${r.offline_tables.join(", ")} — ` +
      "the table's service did not answer; start it and send the round again (--retry)." }));
  }
  if (!tables.length) return [...parts, el("p", { class: "empty", text: "No round is seated yet." })];
  const rows = indexRows(data, tables);
  parts.push(el("div", { class: "big-body" },
    el("div", { class: "hall big-hall", id: "big-hall" }, ...tables.map((t) => tableCard(data, t))),
    el("aside", { class: "big-index", id: "big-index" }, el("h2", { id: "index-title", text: "Find your table" }),
      el("ol", { class: "index-rows", id: "index-rows" }, ...rows.map((x) => el("li", { "data-name": x.name },
        el("span", { class: "ix-name", text: x.name }), el("span", { class: "ix-table", text: String(x.table) }),
        el("span", { class: "ix-wind", text: x.wind }))))))); 
  return parts;
}

// the largest name size at which every table card fits the hall (no card cut, no name cut), for 4 to 60 tables
function fitHall() {
  const hallEl = document.getElementById("big-hall");
  if (!hallEl) return;
  const cards = [...hallEl.children];
  const n = cards.length;
  const key = `${n}|${innerWidth}x${innerHeight}|${cards.map((c) => c.textContent).join("|")}`;
  if (key === fitKey && hallEl.dataset.font) {
    hallEl.style.fontSize = `${hallEl.dataset.font}px`;
    hallEl.style.gridTemplateColumns = `repeat(${hallEl.dataset.cols}, minmax(0, 1fr))`;
    hallEl.style.gridTemplateRows = `repeat(${Math.ceil(n / hallEl.dataset.cols)}, minmax(0, 1fr))`;
    return;
  }
  const began = performance.now();
  const fits = () => cards.every((c) => c.scrollHeight <= c.clientHeight + 1 && c.scrollWidth <= c.clientWidth + 1 &&
    [...c.querySelectorAll(".name, .result")].every((x) => x.scrollWidth <= x.clientWidth + 1));
  // every size in a card is in em: measured once at 100 px, a card needs (w, h) * f / 100 at f px
  const REF = 100;
  hallEl.style.fontSize = `${REF}px`;
  hallEl.classList.add("measure");
  const w0 = Math.max(...cards.map((c) => c.offsetWidth));
  const h0 = Math.max(...cards.map((c) => c.offsetHeight));
  hallEl.classList.remove("measure");
  const style = getComputedStyle(hallEl);
  const gapX = parseFloat(style.columnGap) || 0;
  const gapY = parseFloat(style.rowGap) || 0;
  const W = hallEl.clientWidth;
  const H = hallEl.clientHeight;
  let best = { f: 0, cols: 1 };
  for (let cols = 1; cols <= Math.min(n, 16); cols++) {
    const rowsN = Math.ceil(n / cols);
    const f = Math.floor(REF * Math.min((W - (cols - 1) * gapX) / cols / w0, (H - (rowsN - 1) * gapY) / rowsN / h0));
    if (f > best.f) best = { f, cols };
  }
  // then checked as laid out (rounding, a name's glyphs): a pixel smaller until nothing is cut
  hallEl.style.gridTemplateColumns = `repeat(${best.cols}, minmax(0, 1fr))`;
  hallEl.style.gridTemplateRows = `repeat(${Math.ceil(n / best.cols)}, minmax(0, 1fr))`;
  for (best.f = Math.max(6, best.f); best.f > 6; best.f -= 1) {
    hallEl.style.fontSize = `${best.f}px`;
    if (fits()) break;
  }
  hallEl.dataset.font = String(best.f);
  hallEl.dataset.cols = String(best.cols);
  hallEl.dataset.fitMs = String(Math.round(performance.now() - began)); // what fitting the hall cost, for the test
  fitKey = key;
  fitHall();
}

// the index shows one page at a time, turning every ?rotate= seconds (8 by default)
function pageIndex() {
  const list = document.getElementById("index-rows");
  if (!list) return;
  const items = [...list.children];
  if (!items.length) return;
  items.forEach((x) => { x.hidden = false; });
  const room = list.clientHeight;
  const per = Math.max(1, Math.floor(room / items[0].offsetHeight));
  const pages = Math.ceil(items.length / per);
  indexPage %= pages;
  items.forEach((x, i) => { x.hidden = Math.floor(i / per) !== indexPage; });
  const shown = items.filter((x) => !x.hidden);
  const letter = (x) => fold(x.dataset.name).slice(0, 1).toUpperCase();
  document.getElementById("index-title").textContent = pages > 1
    ? `Find your table · ${indexPage + 1}/${pages}` : "Find your table";
  list.dataset.page = String(indexPage + 1);
  list.dataset.pages = String(pages);
  list.dataset.per = String(per);
  list.dataset.first = shown[0].dataset.name;
  list.dataset.letters = pages > 1 ? `${letter(shown[0])}-${letter(shown[shown.length - 1])}` : "";
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
      const r = roundOf(data, t.round);
      if (timeLeft(r)) {
        parts.push(el("p", { class: "your-time", id: "your-time" }, "Time left: ", timeBox(r, { id: "player-time" }),
          el("span", { class: "of-round", text: ` (round ${r.number} of ${data.tournament.rounds})` })));
      }
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

function describe(action, d) {
  // a referee's call as one line: what was given to whom, which tables started, what changed
  const who = (n) => ((latest && latest.players.find((x) => x.number === n)) || { name: `player ${n}` }).name;
  if (action === "penalty") {
    return `Given: ${d.kind} ${d.id} to ${who(d.player)}, round ${d.round}` + (d.points ? `, ${thousands(-d.points)}` : "") +
      `: ${d.reason}` + (d.hand ? ` (hand ${d.hand})` : "");
  }
  if (action === "start-round") {
    const missing = Object.entries(d.not_started || {}).map(([t, why]) => `table ${t}: ${why}`);
    return `Round ${d.round}: started table ${d.started.join(", ") || "none"}` +
      (missing.length ? `; NOT STARTED: ${missing.join("; ")}` : "");
  }
  if (action === "finish-round") return `Round ${d.round} is ${d.status}.`;
  if (action === "seating") return `Seated round ${d.rounds.join(", ")}.\n${d.quality.join("\n")}`;
  if (action === "withdraw") {
    return `${d.name} withdrawn` + (d.seat_waits_in_rounds.length
      ? `; the seat waits for a substitute in round ${d.seat_waits_in_rounds.join(", ")}` : ".");
  }
  if (action === "substitute") return `${d.name} (player ${d.substitute}) takes the seats of ${who(d.out)}.`;
  if (action === "time") {
    if (d.time_up) {
      const refused = Object.entries(d.refused || {}).map(([t, why]) => `table ${t}: ${why}`);
      return `Time up at table ${d.time_up.join(", ") || "none"}` + (refused.length ? `; NOT TAKEN: ${refused.join("; ")}` : "");
    }
    return `Table time: ${JSON.stringify(d)}`;
  }
  return JSON.stringify(d);
}

// every action of the referee's panel: asked to confirm in words first, then sent; the answer under the forms
function refereePanel(data) {
  const out = el("div", { class: "answer", id: "referee-answer" });
  const act = async (action, body, question) => {
    if (!confirm(question)) { out.textContent = `Not sent: ${question}`; return; }
    const a = await post(`/api/tournament/${action}`, body);
    out.textContent = a.status === "error" ? `Refused: ${a.error}` : describe(action, a.data);
    out.dataset.action = action;
    out.dataset.status = a.status;
  };
  const f = (name, attrs = {}) => el("input", { name, ...attrs });
  const form = (id, title, fields, button, send) => {
    const node = el("form", { id, class: "ref-form", onsubmit: (e) => { e.preventDefault(); send(new FormData(node)); } },
      el("h3", { text: title }), ...fields, el("button", { type: "submit", text: button }));
    return node;
  };
  const next = data.rounds.find((r) => r.status !== "finished");
  const current = data.rounds.find((r) => r.status === "started");
  const roundField = (value) => el("label", {}, "Round ", f("round", { type: "number", min: "1", value: value ? String(value) : "1" }));
  const player = (label = "Player") => el("label", {}, `${label} `, f("player", { placeholder: "name, number or EMA id" }));
  const name = (p) => { const x = latest && latest.players.find((y) => String(y.number) === String(p) || y.name === p); return x ? x.name : p; };
  const kind = el("select", { name: "kind" }, el("option", { value: "penalty", text: "penalty" }),
    el("option", { value: "warning", text: "warning" }));
  const method = el("select", { name: "method" }, ...["shuffled", "swiss", "interval"].map((m) => el("option", { value: m, text: m })));
  const timeAction = el("select", { name: "what" }, el("option", { value: "extend", text: "more minutes" }),
    el("option", { value: "add_hand", text: "one more hand" }), el("option", { value: "time_up", text: "time up now" }));
  return el("section", { class: "referee-panel", id: "referee-panel" }, el("h2", { text: "Referee" }),
    form("start-form", "Start a round", [roundField(next && next.number),
      el("label", {}, f("retry", { type: "checkbox" }), " only the tables not started")], "Start round",
    (d) => act("start-round", { round: Number(d.get("round")), retry: d.get("retry") === "on" },
      `Start round ${d.get("round")}${d.get("retry") === "on" ? " at the tables not started" : " at every table"}?`)),
    form("finish-form", "Finish a round", [roundField(current && current.number)], "Finish round",
      (d) => act("finish-round", { round: Number(d.get("round")) },
        `Finish round ${d.get("round")}? Its results are final and its tables' clocks close.`)),
    form("seating-form", "Seat rounds", [el("label", {}, "Round ", f("round", { type: "number", min: "1",
      placeholder: "next" })), el("label", {}, f("all", { type: "checkbox" }), " every round not played"), method],
    "Seat", (d) => act("seating", { round: d.get("round") ? Number(d.get("round")) : null, all: d.get("all") === "on",
      method: d.get("method") }, `Seat ${d.get("all") === "on" ? "every round not played" : `round ${d.get("round") || "(the next)"}`}` +
      ` by ${d.get("method")}? A seating not yet played is replaced.`)),
    form("withdraw-form", "Withdraw a player", [player()], "Withdraw",
      (d) => act("withdraw", { player: d.get("player") }, `Withdraw ${name(d.get("player"))} from the tournament?`)),
    form("substitute-form", "Substitute", [player("Seat of"), el("label", {}, "Substitute ", f("name", { placeholder: "full name" })),
      el("label", {}, "EMA id ", f("ema_id", { style: "width:10rem" }))], "Seat the substitute",
    (d) => act("substitute", { player: d.get("player"), name: d.get("name"), ema_id: d.get("ema_id") || null },
      `Seat ${d.get("name")} in ${name(d.get("player"))}'s place in every round not played?`)),
    form("time-form", "Time", [el("label", {}, "Table ", f("table", { placeholder: "number or all", style: "width:10rem" })),
      timeAction, el("label", {}, "Minutes ", f("minutes", { type: "number", min: "1", max: "600", value: "5", style: "width:7rem" })),
      el("label", {}, "Reason ", f("reason"))], "Send",
    (d) => {
      const table = String(d.get("table") || "").trim().toLowerCase();
      const what = d.get("what");
      const where = table === "all" ? "every table of the round" : `table ${table}`;
      const body = { table: table === "all" ? "all" : Number(table), reason: d.get("reason") || "" };
      if (what === "time_up") body.time_up = true;
      else if (what === "add_hand") body.add_hand = true;
      else body.extend = Number(d.get("minutes"));
      const question = what === "time_up" ? `Call time NOW at ${where}?` : what === "add_hand"
        ? `One more hand after time at ${where}?` : `${d.get("minutes")} more minutes at ${where}?`;
      return act("time", body, question);
    }),
    form("penalty-form", "Penalty or warning", [player(), el("label", {}, "Table ", f("table", { type: "number", min: "1", style: "width:6rem" })),
      kind, el("label", {}, "Points ", f("points", { type: "number", min: "0", step: "100", style: "width:9rem" })),
      el("label", {}, "Reason ", f("reason")), el("label", {}, "Hand ", f("hand", { placeholder: "E3-1", style: "width:7rem" }))],
    "Give", (d) => act("penalty", { player: d.get("player"), points: Number(d.get("points") || 0), reason: d.get("reason"),
      hand: d.get("hand") || null, kind: d.get("kind"), table: d.get("table") ? Number(d.get("table")) : null },
    `Give ${name(d.get("player"))} a ${d.get("kind")}${Number(d.get("points")) ? ` of ${d.get("points")} points` : ""}?`)),
    out);
}

function refereeView(data) {
  header(data);
  if (!referee) {
    return [el("p", { class: "problem", id: "sign-in" }, "Only a signed-in referee acts here: ",
      el("a", { href: "/login?next=/tournament/referee", text: "sign in" }), ".")];
  }
  const tables = shownTables(data).sort((a, b) => a.table - b.table);
  return [panel || (panel = refereePanel(data)), el("div", { class: "hall" }, ...tables.map((t) => tableCard(data, t)))];
}

const VIEWS = { seating: seatingView, standings: standingsView, player: playerView, overlay: overlayView,
  referee: refereeView };

function render(data) {
  if (!data) return;
  const nodes = VIEWS[view](data);
  if (nodes[0] && nodes[0] === main.firstChild) {
    // the referee's panel stays where it is: taken out and put back on every update of the hall, it would
    // take the focus, and the keys being typed, from the box the referee is filling in
    while (nodes[0].nextSibling) nodes[0].nextSibling.remove();
    nodes[0].after(...nodes.slice(1));
  } else {
    main.replaceChildren(...nodes);
  }
  if (view === "seating") { fitHall(); pageIndex(); }
  document.body.dataset.games = String(data.tables.filter((t) => t.status === "finished").length);
  document.body.dataset.penalties = String(data.penalties.length);
  document.body.dataset.shown = String(data.shown_round || "");
  document.body.dataset.updated = String(Date.now());
}

async function start() {
  if (view === "referee") {
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

// every countdown on the page moves by itself, four times a second
setInterval(() => {
  for (const x of document.querySelectorAll("[data-deadline]")) {
    const text = timeLeft({ status: "started", deadline: x.dataset.deadline });
    if (text !== null && x.textContent !== text) x.textContent = text;
  }
}, 250);

if (view === "seating") {
  const every = Math.max(1, Number(params.get("rotate") || 8));
  setInterval(() => { indexPage += 1; pageIndex(); }, every * 1000);
  addEventListener("resize", () => { fitKey = ""; fitHall(); pageIndex(); });
}

start();
