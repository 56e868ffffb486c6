// Views of one table, shared by the overlay, the table page and the referee console.
// Everything is rendered from the feed's JSON (docs/mqtt.md); a field the feed lacks is not shown.
import { WINDS, back, el, points, seatName, signed, tile, tileName } from "/static/feed.js";

const ROUND_WIND = { E: "East", S: "South", W: "West", N: "North" };
const LIMITS = { mangan: "Mangan", haneman: "Haneman", baiman: "Baiman", sanbaiman: "Sanbaiman",
  yakuman: "Yakuman", "kazoe yakuman": "Kazoe yakuman", "double yakuman": "Double yakuman" };

export function roundText(state) {
  const r = (state && state.round) || "";
  const wind = ROUND_WIND[r[0]];
  return wind ? `${wind} ${r.slice(1)}` : r;
}

function seats(state) {
  return (state && Array.isArray(state.seats) ? state.seats : []).filter((s) => s && typeof s === "object");
}

// places and differences: best first, ties by seat order from the first East (as EMA ranks)
export function standings(state) {
  const list = seats(state).map((s, i) => ({ seat: i, score: typeof s.score === "number" ? s.score : 0 }));
  const order = [...list].sort((a, b) => b.score - a.score || a.seat - b.seat);
  const place = {};
  order.forEach((x, i) => { place[x.seat] = i + 1; });
  const top = order.length ? order[0].score : 0;
  return { place, diff: Object.fromEntries(list.map((x) => [x.seat, x.score - top])), order };
}

function riichiStick(cls = "") {
  return el("span", { class: `riichi-stick ${cls}`.trim(), title: "riichi" }, el("span", { class: "dot" }));
}

// ------------------------------------------------------------------ the table seen from above

function pond(seat, info, discardSeqs, onDiscard) {
  const box = el("div", { class: "pond", "data-seat": seat });
  const rows = [el("div", { class: "pond-row" }), el("div", { class: "pond-row" }), el("div", { class: "pond-row" })];
  box.append(...rows);
  (info.discards || []).forEach((d, i) => {
    const t = typeof d === "string" ? { tile: d } : d || {};
    const cls = [t.riichi ? "turned riichi" : "", t.called ? "called" : ""].join(" ");
    const node = tile(t.tile, cls);
    node.dataset.index = i;
    const seq = discardSeqs && discardSeqs[seat] ? discardSeqs[seat][i] : null;
    if (seq) node.dataset.seq = seq;
    if (onDiscard) {
      node.classList.add("clickable");
      node.addEventListener("click", () => onDiscard(seat, i, t, seq));
    }
    rows[Math.min(2, Math.floor(i / 6))].append(node); // six a row, the third row takes the rest
  });
  return box;
}

// a meld as it lies: the called tile turned, on the side of the player it came from
export function meld(seat, m) {
  const tiles = (m.tiles || []).slice();
  const box = el("span", { class: `meld ${m.kind || ""}`.trim(), "data-kind": m.kind || "" });
  const from = m.from;
  if (m.kind === "ankan" || from === null || from === undefined) {
    tiles.forEach((t, i) => box.append(i === 0 || i === tiles.length - 1 ? back() : tile(t)));
    return box;
  }
  const rel = (((from - seat) % 4) + 4) % 4; // 3: the player on the left, 2: opposite, 1: on the right
  let calledTile = m.called !== undefined ? tileName(m.called) : null;
  let at = rel === 3 ? 0 : rel === 2 ? 1 : tiles.length - 1;
  if (calledTile) {
    const i = tiles.findIndex((t) => tileName(t) === calledTile);
    if (i >= 0) { const [c] = tiles.splice(i, 1); tiles.splice(at, 0, c); }
  }
  if (m.kind === "kakan" && tiles.length === 4) at = Math.min(at, 2);
  tiles.forEach((t, i) => box.append(tile(t, i === at ? "turned called-in" : "")));
  return box;
}

export function tableView(model, { onDiscard = null } = {}) {
  const state = model.state;
  const root = el("div", { class: "table-view" });
  if (!state || !Array.isArray(state.seats)) {
    root.append(el("div", { class: "waiting", text: "waiting for the table…" }));
    return root;
  }
  const { place } = standings(state);
  const centre = el("div", { class: "centre" },
    el("div", { class: `round ${state.phase === "game_over" ? "game-over" : ""}`.trim(),
      text: state.phase === "game_over" ? "Game over" : roundText(state) }),
    el("div", { class: "counters" },
      el("span", { class: "honba", title: "honba" }, el("span", { class: "hundred" }), `×${state.honba ?? 0}`),
      el("span", { class: "sticks", title: "riichi sticks" }, riichiStick("small"), `×${state.sticks ?? 0}`)),
    el("div", { class: "dora" }, ...(state.dora || []).map((t) => tile(t, "dora-indicator")),
      ...Array.from({ length: Math.max(0, 5 - (state.dora || []).length) }, () => back("dora-hidden"))),
    el("div", { class: "wall", text: state.wall !== null && state.wall !== undefined ? `wall ${state.wall}` : "" }));
  root.append(centre);
  seats(state).forEach((s, seat) => {
    const side = el("div", { class: `side side-${seat}`, "data-seat": seat });
    if (state.turn === seat && state.phase === "playing") side.classList.add("turn");
    const plate = el("div", { class: "plate" },
      el("span", { class: `wind ${state.dealer === seat ? "dealer" : ""}`, text: (s.wind || WINDS[seat][0])[0] }),
      el("span", { class: "score", text: points(s.score) }),
      s.riichi ? riichiStick() : null);
    side.append(plate, pond(seat, s, state.discard_seqs, onDiscard));
    const melds = el("div", { class: "melds" }, ...(s.melds || []).map((m) => meld(seat, m)));
    side.append(melds);
    side.dataset.place = place[seat];
    root.append(side);
  });
  return root;
}

// ------------------------------------------------------------------ players

export function playerCards(model, { compact = false } = {}) {
  const state = model.state;
  const box = el("div", { class: `players ${compact ? "compact" : ""}` });
  if (!state) return box;
  const { place, diff } = standings(state);
  seats(state).forEach((s, seat) => {
    const turn = state.turn === seat && state.phase === "playing";
    const card = el("div", { class: `player ${turn ? "turn" : ""} ${s.riichi ? "in-riichi" : ""}`, "data-seat": seat },
      el("span", { class: `wind ${state.dealer === seat ? "dealer" : ""}`, text: (s.wind || WINDS[seat])[0] }),
      el("span", { class: "name", text: seatName(state, seat) }),
      s.riichi ? el("span", { class: "riichi-badge", text: "RIICHI" }) : null,
      s.dead ? el("span", { class: "riichi-badge dead-badge", text: "DEAD HAND" }) : null,
      model.deltas ? el("span", { class: `delta ${model.deltas[seat] > 0 ? "up" : model.deltas[seat] < 0 ? "down" : "even"}`,
        text: signed(model.deltas[seat]) }) : null,
      el("span", { class: "figures" }, el("span", { class: "score", text: points(s.score) }),
        el("span", { class: "diff", text: diff[seat] === 0 ? `${ordinal(place[seat])}` : `${ordinal(place[seat])} · ${signed(diff[seat])}` })));
    box.append(card);
  });
  return box;
}

function ordinal(n) {
  return n === 1 ? "1st" : n === 2 ? "2nd" : n === 3 ? "3rd" : `${n}th`;
}

// ------------------------------------------------------------------ cards at the end of a hand / game

function nameOf(state, result, seat, key) {
  // names travel in the results where the feed gives them; else from the state's seats
  const n = result && result[key];
  return typeof n === "string" && n ? n : seatName(state, seat);
}

function winHand(win) {
  const hand = win.hand || win.tiles || win.concealed || null;
  const winTile = win.win_tile || win.winning_tile || win.tile || null;
  if (!Array.isArray(hand) || !hand.length) return null;
  const rest = hand.slice();
  if (winTile) {
    const i = rest.map(tileName).lastIndexOf(tileName(winTile));
    if (i >= 0) rest.splice(i, 1);
  }
  const order = (t) => { const n = tileName(t) || ""; const suit = "mpsz".indexOf(n[1] || "z");
    return n.length >= 2 && /[1-9]/.test(n[0]) ? suit * 10 + Number(n[0]) : 40 + ["E", "S", "W", "N", "P", "F", "C"].indexOf(n); };
  rest.sort((a, b) => order(a) - order(b));
  const melds = Array.isArray(win.melds) ? win.melds : [];
  return el("div", { class: "win-hand" }, ...rest.map((t) => tile(t)),
    ...melds.map((m) => meld(win.seat, m)),
    winTile ? el("span", { class: "win-tile-gap" }) : null, winTile ? tile(winTile, "win-tile") : null);
}

export function resultCard(model, result) {
  const state = model.state;
  if (!result) return null;
  const deltas = Array.isArray(result.deltas) ? result.deltas : [];
  const payments = el("div", { class: "payments" }, ...deltas.map((d, seat) => el("div", {
    class: `payment ${d > 0 ? "up" : d < 0 ? "down" : "even"}`, "data-seat": seat },
  el("span", { class: "who", text: seatName(state, seat) }), el("span", { class: "delta", text: signed(d) }))));
  const title = `${roundText({ round: (result.hand || "").split("-")[0] })}${result.hand && result.hand.includes("-") ? ` · ${result.hand.split("-")[1]} honba` : ""}`;
  if (result.result === "win" && Array.isArray(result.wins) && result.wins.length) {
    const card = el("div", { class: "card result-card", "data-seq": result.seq ?? "" },
      el("div", { class: "card-title", text: title }));
    const ura = result.ura || result.ura_dora || result.ura_indicators || null;
    result.wins.forEach((w) => {
      const winner = nameOf(state, w, w.seat, "name");
      const tsumo = w.from === null || w.from === undefined;
      const payer = tsumo ? null : nameOf(state, w, w.from, "from_name");
      const limit = w.limit ? (LIMITS[String(w.limit).toLowerCase()] || w.limit) : null;
      const wura = w.ura || ura;
      card.append(...[
        el("div", { class: "headline" }, el("span", { class: "winner", text: winner }),
          el("span", { class: "how", text: tsumo ? " wins by tsumo" : " wins by ron from " }),
          payer ? el("span", { class: "payer", text: payer }) : null),
        winHand(w),
        el("ul", { class: "yaku" }, ...(w.yaku || []).map((y) => el("li", { "data-name": y.name },
          el("span", { class: "yaku-name", text: y.name }), el("span", { class: "han", text: `${y.han} han` })))),
        el("div", { class: "value" },
          el("span", { class: "han-fu", text: `${w.han} han${w.fu ? ` ${w.fu} fu` : ""}` }),
          limit ? el("span", { class: "limit", text: limit }) : null,
          el("span", { class: "points", text: `${points(w.points)}` })),
        w.pao !== null && w.pao !== undefined ? el("div", { class: "pao",
          text: `pao: ${nameOf(state, w, w.pao, "pao_name")} is liable` }) : null,
        Array.isArray(wura) && wura.length ? el("div", { class: "ura" }, el("span", { class: "label", text: "ura dora" }),
          ...wura.map((t) => tile(t, "ura-indicator"))) : null].filter(Boolean));
    });
    card.append(payments);
    return card;
  }
  const tenpai = Array.isArray(result.tenpai) ? result.tenpai : null;
  const kind = result.result === "chombo" ? `Chombo by ${nameOf(state, result, result.chombo, "chombo_name")}`
    : result.draw === "exhaustive" || result.result === "exhaustive_draw" ? "Exhaustive draw"
      : `Abortive draw${result.draw ? `: ${String(result.draw).replace(/_/g, " ")}` : ""}`;
  return el("div", { class: "card draw-card", "data-seq": result.seq ?? "" },
    el("div", { class: "card-title", text: title }), el("div", { class: "headline", text: kind }),
    tenpai ? el("div", { class: "tenpai" }, ...tenpai.map((t, seat) => el("span", {
      class: t ? "ready" : "noten", "data-seat": seat, text: `${seatName(state, seat)}: ${t ? "tenpai" : "noten"}` })))
      : null,
    payments);
}

export function finalCard(model) {
  const final = model.final || (model.state && model.state.final);
  if (!final || !Array.isArray(final.ranking)) return null;
  const state = model.state;
  // the table's own penalties (chombo, dead hands) are in the result: a column says so wherever there is one
  const penalised = final.ranking.some((r) => r.penalty);
  const chombos = (seat) => (model.results || []).filter((h) => h && h.result === "chombo" && h.chombo === seat).length;
  const penalty = (r) => !r.penalty ? "" : `${signed(-r.penalty)}${chombos(r.seat) ? ` (chombo ×${chombos(r.seat)})` : ""}`;
  const rows = [...final.ranking].sort((a, b) => a.place - b.place).map((r) => el("tr", { "data-seat": r.seat },
    el("td", { class: "place", text: ordinal(r.place) }), el("td", { class: "who", text: nameOf(state, r, r.seat, "name") }),
    el("td", { class: "points", text: points(r.points) }), el("td", { class: "uma", text: signed(r.uma) }),
    penalised ? el("td", { class: "penalty", text: penalty(r) }) : null,
    el("td", { class: "result", text: signed(r.result) })));
  const heads = ["", "", "points", "uma", ...(penalised ? ["penalty"] : []), "result"];
  return el("div", { class: "card final-card" }, el("div", { class: "card-title", text: "Final ranking" }),
    el("table", {}, el("thead", {}, el("tr", {}, ...heads.map((h) => el("th", { text: h })))),
      el("tbody", {}, ...rows)));
}

export function conditionsCard(model) {
  const state = model.state;
  const conditions = state && state.conditions;
  if (!Array.isArray(conditions) || !conditions.some((c) => Array.isArray(c) ? c.length : c)) return null;
  return el("div", { class: "card conditions" }, el("div", { class: "card-title", text: "All last — what each needs" }),
    ...conditions.map((lines, seat) => el("div", { class: "condition", "data-seat": seat },
      el("span", { class: "who", text: seatName(state, seat) }),
      el("ul", {}, ...(Array.isArray(lines) ? lines : [lines]).filter(Boolean).map((t) => el("li", { text: String(t) }))))));
}

// the result of the hand that just ended (between hands), else null
export function lastResult(model) {
  const state = model.state;
  if (!state || state.phase !== "between_hands") return null;
  // the server's copy of a result carries the winning hand where the feed's lacks it: prefer it
  const listed = (model.results || [])[(model.results || []).length - 1];
  const own = state.last_result;
  return (own && listed && own.hand === listed.hand && own.result === listed.result ? { ...own, ...listed }
    : own || listed) || null;
}

// the card to show now: the final ranking at the end, the last hand's result between hands (until the next deal)
export function endCard(model) {
  const state = model.state;
  if (!state) return null;
  if (state.phase === "game_over") return finalCard(model);
  const last = lastResult(model);
  return last ? resultCard(model, last) : null;
}

// The moment on screen. While a hand is dealt or played: the feed's state. Between hands, while the result card
// is up, the feed's state already describes the next deal (its round, winds, counters, the scores after the
// payments, empty ponds); the page shows instead the hand that just ended, as it ended, from the result itself:
// its round, honba, dealer and winds, the riichi sticks on the table (those at its start and its deposits), each
// score before the result's payments with the payment beside it (``deltas``), and its ponds, melds and dora from
// the last state of that hand where the page saw it. The next deal replaces it all at once.
export function moment(model) {
  const state = model.state;
  const result = lastResult(model);
  const deltas = result && Array.isArray(result.deltas) && result.deltas.length === 4 ? result.deltas : null;
  if (!deltas || typeof result.round !== "string") return model;
  const dealer = typeof result.dealer === "number" ? result.dealer : state.dealer;
  const after = Array.isArray(result.scores) && result.scores.length === 4 ? result.scores
    : seats(state).map((s) => s.score);
  const deposits = Array.isArray(result.riichi_deposits) ? result.riichi_deposits : [];
  const hand = model.handState && model.handState.round === result.round && model.handState.honba === result.honba
    ? model.handState : null;
  const view = {
    ...state, round: result.round, honba: result.honba ?? state.honba, dealer, turn: null,
    sticks: (result.sticks ?? 0) + deposits.length,
    wall: hand ? hand.wall : null, dora: hand ? hand.dora : result.dora || [],
    discard_seqs: hand ? hand.discard_seqs : null,
    seats: seats(state).map((s, i) => {
      const played = hand && hand.seats && hand.seats[i] ? hand.seats[i] : {};
      return { ...s, discards: played.discards || [], melds: played.melds || [],
        riichi: hand ? !!played.riichi : deposits.includes(i), dead: !!played.dead,
        wind: WINDS[(i - dealer + 4) % 4][0],
        score: typeof after[i] === "number" ? after[i] - deltas[i] : s.score };
    }),
  };
  return { ...model, state: view, deltas };
}
