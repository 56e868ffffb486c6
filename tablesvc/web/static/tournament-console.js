// On a table's referee console, when the table is one of the tournament's hall: a penalty or a warning for a
// player of this table in the round in play (POST /api/tournament/penalty with the site, table and seat).
import { el } from "/static/feed.js";

const [, site, table] = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
const WINDS = ["East", "South", "West", "North"];

// every penalty and warning of the tournament for each player of this table, and their chombo total, on the
// console's player list (referee.js draws them: window.tablesvcTournament)
function showPenalties(data, here) {
  const players = new Map((data.players || []).map((p) => [p.number, p]));
  window.tablesvcTournament = {
    penalties: here.seats.map((s) => (data.penalties || []).filter((x) => x.player === s.player)),
    chombo: here.seats.map((s) => (players.get(s.player) || {}).chombo || 0),
  };
  if (window.tablesvcReferee) window.tablesvcReferee.render();
}

async function main() {
  const session = await (await fetch("/api/session")).json().catch(() => ({}));
  if (!session.referee) return;
  const response = await fetch("/api/tournament");
  if (!response.ok) return; // no records database, or no tournament in it
  const data = await response.json();
  const hall = data.hall.find((h) => h.site === site && h.table_id === table);
  const round = data.rounds.find((r) => r.status === "started");
  const here = hall && round && data.tables.find((t) => t.round === round.number && t.table === hall.number);
  if (!here) return;
  showPenalties(data, here);
  const out = el("div", { class: "answer", id: "tournament-answer" });
  const seat = el("select", { name: "seat" }, ...here.seats.map((s, i) => el("option", { value: String(i),
    text: `${WINDS[i]}: ${s.name}` })));
  const kind = el("select", { name: "kind" }, el("option", { value: "penalty", text: "penalty" }),
    el("option", { value: "warning", text: "warning" }));
  const points = el("input", { name: "points", type: "number", min: "0", step: "100", style: "width:9rem" });
  const reason = el("input", { name: "reason" });
  const hand = el("input", { name: "hand", placeholder: "E3-1", style: "width:7rem" });
  const form = el("form", { id: "tournament-penalty", onsubmit: async (e) => {
    e.preventDefault();
    const r = await fetch("/api/tournament/penalty", { method: "POST", headers: { "Content-Type": "application/json",
      "X-CSRF-Token": session.csrf || "" }, body: JSON.stringify({ site, table, seat: Number(seat.value),
      kind: kind.value, points: Number(points.value || 0), reason: reason.value, hand: hand.value || null }) });
    const a = await r.json().catch(() => ({ status: "error", error: `HTTP ${r.status}` }));
    const who = here.seats[Number(seat.value)].name;
    if (a.status !== "error") {
      const again = await fetch("/api/tournament");
      if (again.ok) showPenalties(await again.json(), here);
    }
    out.textContent = a.status === "error" ? `Refused: ${a.error}` : `Given: ${a.data.kind} ${a.data.id} to ${who}, ` +
      `round ${a.data.round}` + (a.data.points ? `, −${(a.data.points / 1000).toFixed(1)}` : "") + `: ${a.data.reason}`;
  } }, el("label", {}, "Player ", seat), kind, el("label", {}, "Points ", points), el("label", {}, "Reason ", reason),
  el("label", {}, "Hand ", hand), el("button", { type: "submit", text: "Give" }));
  document.body.append(el("section", { class: "referee-panel tournament-console", id: "tournament-console" },
    el("h2", { text: `${data.tournament.name}, round ${round.number}, table ${hall.number}: penalty or warning` }),
    form, out));
}

main();
