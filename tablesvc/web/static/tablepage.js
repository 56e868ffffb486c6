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

export function renderTablePage(app, m, { onDiscard = null, extra = null, clockExtra = null } = {}) {
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
