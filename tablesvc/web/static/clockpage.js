// The hall's clock on a big screen (or a phone): the round timer, and every table's own time, which an
// extension or an added hand makes differ from the round's. ?view=round: the round timer alone;
// ?site=NAME: one site's tables. Tables without a clock are left out; a finished table goes last.
import { connect, el } from "/static/feed.js";
import { clockBox, clockState, remaining } from "/static/clock.js";

const params = new URLSearchParams(location.search);
const view = params.get("view") === "round" ? "round" : "hall";
document.body.classList.add(`view-${view}`);
const roundBox = document.getElementById("round");
const hall = document.getElementById("hall");
const live = document.getElementById("live");

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

function order(t) {
  const state = clockState(t.clock, t.phase);
  const rank = { "time-up": 0, ending: 1, running: 2, finished: 3 }[state] ?? 4;
  return [rank, remaining(t.clock) ?? 0, `${t.site}/${t.table}`];
}

function compare(a, b) {
  const x = order(a); const y = order(b);
  return x[0] - y[0] || x[1] - y[1] || x[2].localeCompare(y[2]);
}

function tableCard(t) {
  const names = (t.players || []).map((p) => p.name).join(" · ");
  return el("div", { class: "hall-table", "data-site": t.site, "data-table": t.table },
    el("div", { class: "hall-name", text: t.table }),
    clockBox(t.clock, t.phase, { cls: "small" }),
    el("div", { class: "hall-players", text: names }));
}

function render(m) {
  const tables = (m.tables || []).filter((t) => t.clock);
  const round = roundClock(tables);
  roundBox.replaceChildren(round
    ? el("div", { class: "round-inner" }, clockBox(round.clock, "playing", { cls: "big" }),
      el("div", { class: "round-note", text: round.clock.time_up
        ? `time is up: ${round.playing} table${round.playing === 1 ? "" : "s"} still playing`
        : `${round.playing} table${round.playing === 1 ? "" : "s"} playing` }))
    : el("div", { class: "empty", text: tables.length ? "Every table has finished." : "No table is playing on a clock." }));
  if (view === "hall") hall.replaceChildren(...[...tables].sort(compare).map(tableCard));
  live.textContent = m.connected ? `live · ${tables.length} table${tables.length === 1 ? "" : "s"} on the clock` : "reconnecting…";
  document.body.dataset.tables = tables.length;
}

const site = params.get("site");
connect(`/sse/site${site ? `?site=${encodeURIComponent(site)}` : ""}`, {}, render);
