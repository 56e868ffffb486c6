// The stream overlay (an OBS browser source): transparent, 1920x1080 or 1280x720 (it scales with the
// source's width). ?view=full (default): the table from above, players, result cards;
// ?view=scores: a score bar only. A game on the tournament clock shows its countdown (clock.js).
import { connect, el, pathParts } from "/static/feed.js";
import { clockBox } from "/static/clock.js";
import { conditionsCard, endCard, moment, playerCards, roundText, tableView } from "/static/render.js";

const { site, table } = pathParts();
const params = new URLSearchParams(location.search);
const view = params.get("view") === "scores" ? "scores" : "full";
document.body.classList.add(`view-${view}`);
const app = document.getElementById("app");
const model = {};

function render(m) {
  // between hands: the hand that just ended, as it ended, under its result card (render.js, moment)
  const shown = moment(m);
  const state = shown.state;
  app.replaceChildren();
  if (view === "scores") {
    app.append(el("div", { class: "score-bar" },
      el("div", { class: "round-box" }, el("span", { class: "round", text: state && state.phase === "game_over" ? "Final" : roundText(state) }),
        el("span", { class: "counters", text: state ? `${state.honba ?? 0} honba · ${state.sticks ?? 0} riichi` : "" }),
        clockBox(m.state && m.state.clock, m.state && m.state.phase, { rule: false })),
      playerCards(shown, { compact: true })));
    const card = endCard(m);
    if (card) app.append(el("div", { class: "side-cards" }, card));
    return;
  }
  const right = el("div", { class: "right" }, el("div", { class: "title" },
    el("span", { class: "table-name", text: `${site} / ${table}` }),
    clockBox(m.state && m.state.clock, m.state && m.state.phase, { rule: false }),
    el("span", { class: "round", text: !state ? "" : state.phase === "game_over" ? "Final" : roundText(state) })),
  playerCards(shown));
  const card = endCard(m);
  if (card) right.append(card);
  const cond = conditionsCard(m);
  if (cond) right.append(cond);
  app.append(el("div", { class: "stage" }, tableView(shown), right));
}

connect(`/sse/table/${encodeURIComponent(site)}/${encodeURIComponent(table)}`, model, render);
