// The table page (and the referee console built on it): the live table, players, the hand-by-hand
// history with deltas, downloads of the game.
import { ago, el, pathParts, points, seatName, signed } from "/static/feed.js";
import { clockBox } from "/static/clock.js";
import { endCard, moment, playerCards, roundText, tableView } from "/static/render.js";

export const { site, table } = pathParts();
export const base = `${encodeURIComponent(site)}/${encodeURIComponent(table)}`;

function history(m) {
  const state = m.state;
  const names = [0, 1, 2, 3].map((s) => seatName(state, s));
  const rows = (m.results || []).filter((r) => r && r.type !== "game_result").map((r, i) => el("tr", { "data-seq": r.seq ?? "" },
    el("td", { text: `${i + 1}. ${r.hand || ""}` }),
    el("td", { class: "summary", text: (r.summary || r.result || "").replace(/\bseat ([0-3])\b/g, (_, s) => names[Number(s)]) }),
    ...(r.deltas || [0, 0, 0, 0]).map((d) => el("td", { class: d > 0 ? "up" : d < 0 ? "down" : "", text: signed(d) }))));
  return el("table", { class: "history" },
    el("thead", {}, el("tr", {}, el("th", { text: "hand" }), el("th", { text: "result" }), ...names.map((n) => el("th", { text: n })))),
    el("tbody", {}, ...rows));
}

// the referees' rulings (state.rulings, the journal entries their commands wrote): "discard 57 amended by Ann, 21:04"
const RULED = { amend: "amended", undo: "undone", chombo: "chombo ruled", dead_hand: "dead hand ruled",
  set_scores: "scores set", end_game: "game ended", start_game: "game started" };

function clock(ts) {
  return ts ? new Date(ts * 1000).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" }) : "";
}

function rulings(state) {
  const list = (state && state.rulings) || [];
  if (!list.length) return null;
  return el("div", { class: "panel rulings" }, el("h2", { text: "Referee" }),
    el("ul", { class: "rulings" }, ...list.slice().reverse().map((r) => el("li", { "data-seq": r.seq, "data-by": r.by || "" },
      el("span", { class: "what", text: `${r.target ? `#${r.target} ` : ""}${RULED[r.kind] || r.kind}` }),
      ` by ${r.by || "a referee"}, `, el("span", { class: "when", text: clock(r.ts) })))));
}

// The score sticks compared with the game (the `sticks` topic, tables with a stick tray reader): each seat's tray
// beside what the game says, and the comparison in words; an alert stands out until the referee rules.
const STICKS_STATUS = { off: "not compared", waiting: "being paid", ok: "agree", mismatch: "differ", fault: "reader fault" };

export function sticksPanel(m, actions = null) {
  const s = m.sticks;
  if (!s) return null;
  const state = m.state;
  const diff = Object.fromEntries((s.differences || []).map((d) => [d.seat, d.difference]));
  const rows = [0, 1, 2, 3].map((seat) => el("tr", { class: diff[seat] ? "differs" : "", "data-seat": seat },
    el("td", { text: seatName(state, seat) }),
    el("td", { class: "tray", text: points(s.trays ? s.trays[seat] : null) }),
    el("td", { class: "game", text: points(s.game ? s.game.scores[seat] : null) }),
    el("td", { class: diff[seat] > 0 ? "up" : diff[seat] < 0 ? "down" : "", text: diff[seat] ? signed(diff[seat]) : "" })));
  rows.push(el("tr", { class: s.game && s.riichi !== s.game.sticks ? "differs" : "" }, el("td", { text: "riichi sticks" }),
    el("td", { class: "tray", text: s.riichi ?? "—" }), el("td", { class: "game", text: s.game ? s.game.sticks : "—" }), el("td")));
  return el("div", { class: `panel sticks ${s.status}`, "data-status": s.status },
    el("h2", {}, "Score sticks ", el("span", { class: `sticks-badge ${s.status}`, text: STICKS_STATUS[s.status] || s.status })),
    el("p", { class: "sticks-text", text: s.text || "" }),
    el("table", { class: "sticks-table" }, el("thead", {}, el("tr", {}, el("th", { text: "" }), el("th", { text: "tray" }),
      el("th", { text: "game" }), el("th", { text: "" }))), el("tbody", {}, ...rows)),
    actions);
}

export function renderTablePage(app, m, { onDiscard = null, extra = null, clockExtra = null, sticksActions = null } = {}) {
  const state = m.state;
  const online = m.status && m.status.status === "online";
  const shown = moment(m); // between hands: the hand that just ended, as it ended (render.js)
  const head = el("header", { class: "top" }, el("h1", { text: `${site} / ${table}` }),
    el("span", { class: `badge ${m.status ? (online ? "online" : "offline") : "unknown"}`,
      text: m.status ? (online ? "online" : "offline") : "unknown" }),
    el("span", { class: "live", text: m.since ? `for ${ago(m.since)}` : "" }),
    el("span", { class: "live", text: state ? `${state.phase === "game_over" ? "game over" : roundText(state)}${state.rules ? ` · ${state.rules}` : ""}` : "" }),
    el("span", { class: "spacer" }),
    el("a", { href: `/overlay/${base}`, text: "overlay" }), el("a", { href: "/", text: "all tables" }),
    el("span", { class: "live", text: m.connected ? "live" : "reconnecting…" }));
  const card = endCard(m);
  const clock = state && state.clock ? el("div", { class: "panel clock-panel" }, el("h2", { text: "Clock" }),
    clockBox(state.clock, state.phase), clockExtra ? clockExtra(state.clock, state.phase) : null) : null;
  const side = el("div", { class: "side-info" }, clock, el("div", { class: "panel" }, el("h2", { text: "Players" }), playerCards(shown),
    card ? el("div", { class: "end-card" }, card) : null));
  const sticks = sticksPanel(m, sticksActions ? sticksActions(m) : null);
  if (sticks) side.prepend(sticks);
  if (extra) side.append(extra);
  // state.downloads: per format, null where the server can write the game, else why not (greyed, the reason
  // as its title and beneath: a live table's deal is not seen, so tenhou.net/6 is refused and only mjai offered)
  const can = (state && state.downloads) || {};
  const link = (fmt, text) => can[fmt]
    ? el("a", { class: "unavailable", "data-format": fmt, "aria-disabled": "true", title: can[fmt], text })
    : el("a", { href: `/download/${base}.${fmt}`, "data-format": fmt, download: "", text });
  const why = [...new Set(Object.values(can).filter(Boolean))];
  const downloads = el("div", { class: "panel downloads" }, el("h2", { text: "Download the game" }),
    el("div", { class: "links" }, link("mjai", "mjai (Mortal, mjai-reviewer)"), link("tenhou6", "tenhou.net/6")),
    ...why.map((w) => el("p", { class: "hint unavailable-why", text: w })));
  const hist = el("div", { class: "panel" }, el("h2", { text: "Hands" }), history(m));
  side.append(hist, ...[rulings(state)].filter(Boolean), downloads);
  app.replaceChildren(head, el("main", {}, el("div", { class: "table-layout" },
    el("div", { class: "live" }, tableView(shown, { onDiscard })), side)));
}

export { points };
