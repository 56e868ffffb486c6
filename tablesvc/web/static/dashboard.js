// The club dashboard: every table the server found from the retained status topics, no configuration.
import { ago, connect, el, points, span } from "/static/feed.js";
import { clockBox } from "/static/clock.js";

const box = document.getElementById("tables");
const live = document.getElementById("live");
const ROUND = { E: "East", S: "South", W: "West", N: "North" };

// time in game: from the game's first journal entry to its end (or now); unknown where this server joined late
function duration(from, to) {
  if (!from) return "—";
  return to ? span(to - from) : ago(from);
}

function card(t) {
  const state = t.known ? (t.online ? "online" : "offline") : "unknown";
  const path = `${encodeURIComponent(t.site)}/${encodeURIComponent(t.table)}`;
  // after the game the feed's round is the one that would have come next: not shown
  const round = t.phase === "game_over" ? "Final" : t.round ? `${ROUND[t.round[0]] || t.round[0]} ${t.round.slice(1)}` : "—";
  const phase = t.phase === "game_over" ? "game over" : t.phase === "not_started" ? "no game" : t.phase ? t.phase.replace("_", " ") : "";
  return el("div", { class: `table-card ${state}`, "data-site": t.site, "data-table": t.table },
    el("div", { class: "head" }, el("a", { class: "name", href: `/table/${path}`, text: `${t.site} / ${t.table}` }),
      el("span", { class: `badge ${state}`, text: state }),
      el("span", { class: "since", text: t.since ? `for ${ago(t.since)}` : "" })),
    el("div", { class: "round-line" }, el("span", { class: "round" }, el("b", { text: round }),
      t.honba && t.phase !== "game_over" ? ` · ${t.honba} honba` : ""),
      el("span", { class: "phase", text: phase }),
      el("span", { class: "hands" }, "hands ", el("b", { text: String(t.hands_played ?? 0) })),
      el("span", { class: "elapsed" }, "in game ", el("b", { text: duration(t.game_started, t.game_ended) }))),
    clockBox(t.clock, t.phase),
    el("div", { class: "seats" }, ...(t.players || []).flatMap((p, seat) => [
      el("span", { class: `wind ${t.dealer === seat ? "dealer" : ""}`, text: (p.wind || "")[0] || "" }),
      el("span", { class: "player-name", text: p.name }),
      el("span", { class: "score", text: points(p.score) })])),
    el("div", { class: "devices" }, ...(t.devices || []).map((d) => el("span", {
      class: `device ${d.connected ? "up" : "down"}`, "data-name": d.name, title: d.state || "" },
    d.name, d.errors ? el("span", { class: "errors", text: `${d.errors} errors` }) : null))),
    (t.alerts || []).length ? el("ul", { class: "alerts" }, ...t.alerts.map((a) => el("li", { class: a.kind, "data-kind": a.kind },
      a.text, a.ts ? el("span", { class: "when", text: `${ago(a.ts)} ago` }) : null))) : null,
    el("div", { class: "links" }, el("a", { href: `/table/${path}`, text: "table" }),
      el("a", { href: `/overlay/${path}`, text: "overlay" }), el("a", { href: `/referee/${path}`, text: "referee" })),
    phoneCode(path));
}

// a signed-in referee sees each table's QR code: scanned, it takes a phone to the table's /play page with its token
let referee = false;
function phoneCode(path) {
  if (!referee) return null;
  return el("a", { class: "phone-code", href: `/play-code/${path}.svg`, target: "_blank", title: "print it for the table" },
    el("img", { src: `/play-code/${path}.svg`, alt: "QR code of the table's phone page", width: "132", height: "132" }),
    el("span", { text: "phones: scan to enter results" }));
}

// the web server's own alerts (a referee sign-in locked out after wrong passwords), above the tables
function serverCard(server) {
  const alerts = (server && server.alerts) || [];
  if (!alerts.length) return null;
  return el("div", { class: "server-card", id: "server-alerts" }, el("h2", { text: "Web server" }),
    el("ul", { class: "alerts" }, ...alerts.slice(0, 8).map((a) => el("li", { class: a.kind, "data-kind": a.kind },
      a.text, a.count > 1 ? el("b", { class: "count", text: ` ×${a.count}` }) : null, a.ts ? el("span", { class: "when", text: `${ago(a.ts)} ago` }) : null))));
}

function render(m) {
  const tables = m.tables || [];
  const server = serverCard(m.server);
  box.replaceChildren(...(server ? [server] : []),
    ...(tables.length ? tables.map(card) : [el("div", { class: "empty", text: "No table has published yet." })]));
  live.textContent = m.connected ? `live · ${tables.length} table${tables.length === 1 ? "" : "s"}` : "reconnecting…";
  document.body.dataset.tables = tables.length;
}

const model = {};
connect("/sse/site", model, render);
setInterval(() => render(model), 5000); // "since" and "in game" keep counting

// the standings page, when this server reads a records database (--records-db)
fetch("/api/session", { credentials: "same-origin" }).then((r) => r.json()).then((s) => {
  document.getElementById("standings-link").hidden = !s.standings;
  referee = Boolean(s.referee);
  render(model);
}).catch(() => {});
