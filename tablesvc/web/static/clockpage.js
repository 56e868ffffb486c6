// The hall's clock on a big screen (or a phone): the round timer, and every table's own time, which an
// extension or an added hand makes differ from the round's. ?view=round: the round timer alone;
// ?site=NAME: one site's tables. Tables without a clock are left out.
// In a tournament (the web server has a records database with one) the big timer is the round's one deadline,
// the tables are the tournament's, in table-number order, named as its hall numbers them ("Table 3"), and the
// header says the tournament and the round: an extension or time up at one table changes that table's card only.
// On a big screen the cards share the screen below the round timer: as many columns as make them largest, and
// their text sized to the card (CSS container units), so that 4 tables or 60 read across a hall.
import { connect, el } from "/static/feed.js";
import { clockBox } from "/static/clock.js";

const params = new URLSearchParams(location.search);
const view = params.get("view") === "round" ? "round" : "hall";
document.body.classList.add(`view-${view}`);
const roundBox = document.getElementById("round");
const hall = document.getElementById("hall");
const live = document.getElementById("live");
const title = document.querySelector("header.top h1");
let tournament = null; // GET /api/tournament, read every few seconds; null without one
let lastMessage = null;

// the round's deadline: the one most running tables share (a tournament starts every table with the hall's)
function roundClock(tables) {
  const running = tables.filter((t) => t.clock && t.phase !== "game_over");
  if (!running.length) return null;
  const counts = new Map();
  for (const t of running) {
    const key = t.clock.time_up ? "time-up" : t.clock.deadline;
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  const [key] = [...counts.entries()].sort((a, b) => b[1] - a[1] || String(b[0]).localeCompare(String(a[0])))[0];
  const table = running.find((t) => (t.clock.time_up ? "time-up" : t.clock.deadline) === key);
  // the round timer shows the guaranteed time, not one table's hands: after time it counts what is still played
  const clock = { ...table.clock, extended: 0, added: 0 };
  if (key === "time-up") clock.hands_left = null;
  return { clock, playing: running.length };
}

// the tournament's number for a table (its hall), else none
function hallNumber(t) {
  const h = tournament && tournament.hall.find((x) => x.site === t.site && x.table_id === t.table);
  return h ? h.number : null;
}

const natural = new Intl.Collator(undefined, { numeric: true });

// table-number order: the tournament's numbers, else the tables' names as numbers read ("t2" before "t10")
function compare(a, b) {
  const x = hallNumber(a); const y = hallNumber(b);
  if (x !== null && y !== null) return x - y;
  if (x !== null || y !== null) return x !== null ? -1 : 1;
  return natural.compare(`${a.site}/${a.table}`, `${b.site}/${b.table}`);
}

// the round in play of the tournament, if any
function tournamentRound() {
  if (!tournament) return null;
  return tournament.rounds.find((r) => r.number === tournament.shown_round && r.status === "started" && r.deadline) || null;
}

function tableCard(t) {
  const names = (t.players || []).map((p) => p.name).join(" · ");
  const number = hallNumber(t);
  // the hall's number for the players; the service's own name only as a hover hint for the staff
  return el("div", { class: "hall-table", "data-site": t.site, "data-table": t.table, "data-number": number ?? "",
    title: `${t.site}/${t.table}` },
    el("div", { class: "hall-name", text: number !== null ? `Table ${number}` : t.table }),
    clockBox(t.clock, t.phase, { cls: "small" }),
    el("div", { class: "hall-players", text: names }));
}

const CARD_ASPECT = 1.6; // the width / height a card reads best at

// the cards fill the screen below the round timer: the column count that makes them largest at about
// CARD_ASPECT; on a phone (or the round view) the page flows and scrolls as it is
function fitHall() {
  const cards = hall.children.length;
  const fits = view === "hall" && cards > 0 && window.innerWidth > 600;
  hall.classList.toggle("fitted", fits);
  document.body.classList.toggle("crowded", fits && cards > 12);
  if (!fits) {
    hall.style.removeProperty("grid-template-columns");
    hall.style.removeProperty("grid-auto-rows");
    return;
  }
  const style = getComputedStyle(hall);
  const gap = parseFloat(style.rowGap) || 0;
  const width = hall.clientWidth;
  const bottom = parseFloat(getComputedStyle(hall.parentElement).paddingBottom) || 0;
  const height = Math.max(120, window.innerHeight - hall.getBoundingClientRect().top - window.scrollY - bottom);
  let best = null;
  for (let cols = 1; cols <= cards; cols++) {
    const rows = Math.ceil(cards / cols);
    const w = (width - gap * (cols - 1)) / cols;
    const h = (height - gap * (rows - 1)) / rows;
    const scale = Math.min(w / CARD_ASPECT, h); // how tall a card of the best shape can be
    if (!best || scale > best.scale) best = { cols, scale, h };
  }
  hall.style.gridTemplateColumns = `repeat(${best.cols}, minmax(0, 1fr))`;
  hall.style.gridAutoRows = `${Math.floor(best.h)}px`;
}
window.addEventListener("resize", fitHall);

function render(m) {
  lastMessage = m;
  let tables = (m.tables || []).filter((t) => t.clock);
  if (tournament && tournament.hall.length && tables.some((t) => hallNumber(t) !== null)) {
    tables = tables.filter((t) => hallNumber(t) !== null); // the tournament's tables only
  }
  const round = roundClock(tables);
  const tr = tournamentRound();
  if (round && tr) {
    // the round's one deadline, whatever one table was given; time is up for the round when the deadline has
    // passed or time was called at every table still playing
    const all = tables.filter((t) => t.phase !== "game_over");
    round.clock = { ...round.clock, deadline: tr.deadline, time_up: all.length > 0 && all.every((t) => t.clock.time_up),
      hands_left: null, extended: 0, added: 0 };
  }
  if (title) title.textContent = tournament ? tournament.tournament.name : "Round clock";
  const roundName = tr ? `Round ${tr.number} of ${tournament.tournament.rounds}` : "";
  roundBox.replaceChildren(round
    ? el("div", { class: "round-inner" },
      roundName ? el("div", { class: "round-title" },
        el("span", { class: "tournament-name", text: `${tournament.tournament.name} · ` }),
        el("span", { class: "round-name", id: "round-name", text: roundName })) : null,
      clockBox(round.clock, "playing", { cls: "big" }),
      el("div", { class: "round-note", text: round.clock.time_up
        ? `time is up: ${round.playing} table${round.playing === 1 ? "" : "s"} still playing`
        : `${round.playing} table${round.playing === 1 ? "" : "s"} playing` }))
    : el("div", { class: "empty", text: tables.length ? "Every table has finished." : "No table is playing on a clock." }));
  if (view === "hall") {
    hall.replaceChildren(...[...tables].sort(compare).map(tableCard));
    fitHall();
  }
  live.textContent = m.connected ? `live · ${tables.length} table${tables.length === 1 ? "" : "s"} on the clock` : "reconnecting…";
  document.body.dataset.tables = tables.length;
}

// the tournament, where the web server has one: its name, the round, the hall's numbers
async function readTournament() {
  try {
    const r = await fetch("/api/tournament", { cache: "no-store" });
    tournament = r.ok ? await r.json() : null;
  } catch { /* keep the last one read */ }
  if (lastMessage) render(lastMessage);
}
readTournament();
setInterval(readTournament, 5000);

const site = params.get("site");
connect(`/sse/site${site ? `?site=${encodeURIComponent(site)}` : ""}`, {}, render);
