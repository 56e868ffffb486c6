// The club's standings from the records database (GET /api/standings[?since=YYYY-MM-DD]), read once per visit.
import { el, signed } from "/static/feed.js";

const playersBox = document.getElementById("players");
const gamesBox = document.getElementById("games");
const count = document.getElementById("count");
const sinceInput = document.getElementById("since");
const ORDINAL = ["1st", "2nd", "3rd", "4th"];

const pct = (x) => `${(100 * x).toFixed(1)}%`;
const cls = (v) => (v > 0 ? "up" : v < 0 ? "down" : "");

function playersTable(players) {
  if (!players.length) return el("div", { class: "empty", text: "No finished games yet." });
  const head = ["#", "Player", "Games", ...ORDINAL, "Avg place", "Total", "Win", "Deal-in", "Riichi", "Avg win"];
  return el("table", { class: "history standings" },
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { text: h })))),
    el("tbody", {}, ...players.map((p, i) => el("tr", { "data-player": p.name },
      el("td", { text: String(i + 1) }), el("td", { class: "name", text: p.name }),
      el("td", { text: String(p.games) }), ...p.places.map((n) => el("td", { text: String(n) })),
      el("td", { text: p.average_place.toFixed(2) }),
      el("td", { class: `total ${cls(p.total)}`, text: signed(p.total) }),
      el("td", { text: pct(p.win_rate) }), el("td", { text: pct(p.deal_in_rate) }),
      el("td", { text: pct(p.riichi_rate) }), el("td", { text: Math.round(p.average_win).toLocaleString("en") })))));
}

function when(started) {
  const d = new Date(started);
  return isNaN(d) ? started : d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

function gamesTable(games) {
  if (!games.length) return el("div", { class: "empty", text: "No games." });
  return el("table", { class: "history games" },
    el("thead", {}, el("tr", {}, ...["Table", "Started", "Players", "Result"].map((h) => el("th", { text: h })))),
    el("tbody", {}, ...games.slice().reverse().map((g) => {
      const ranked = g.players.filter((p) => p.place !== null).sort((a, b) => a.place - b.place);
      return el("tr", { "data-game": g.game },
        el("td", { text: `${g.site} / ${g.table}` }), el("td", { text: when(g.started) }),
        el("td", { class: "seats-line", text: g.players.map((p) => p.name).join(", ") }),
        el("td", { class: "result-line" }, ...ranked.flatMap((p, i) => [i ? ", " : "",
          `${p.place}. ${p.name} `, el("span", { class: cls(p.result), text: signed(p.result) })])));
    })));
}

let since = new URLSearchParams(location.search).get("since") || ""; // a date, or a time (ISO 8601)

async function load() {
  const r = await fetch(`/api/standings${since ? `?since=${encodeURIComponent(since)}` : ""}`);
  const data = await r.json().catch(() => ({ error: `the server answered ${r.status}` }));
  if (!r.ok) {
    const help = r.status === 404
      ? [el("p", { text: data.error }), el("p", {}, "Start the web server with ",
        el("code", { text: "tablesvc web --records-db /var/lib/tablesvc/records.sqlite3" }),
        " (or set ", el("code", { text: "records_db" }), " in its [web] section): the database ",
        el("code", { text: "tablesvc records" }), " writes, a SQLite file or a postgresql:// URL.")]
      : [el("p", { text: data.error })];
    playersBox.replaceChildren(el("div", { class: "setup" }, ...help));
    gamesBox.replaceChildren();
    count.textContent = "";
    document.body.dataset.state = "error";
    return;
  }
  playersBox.replaceChildren(playersTable(data.players));
  gamesBox.replaceChildren(gamesTable(data.games));
  count.textContent = `${data.games.length} game${data.games.length === 1 ? "" : "s"}` + (since ? ` since ${since}` : "");
  document.body.dataset.state = "loaded";
}

document.getElementById("since-form").addEventListener("submit", (e) => {
  e.preventDefault();
  since = sinceInput.value;
  const url = new URL(location.href);
  if (since) url.searchParams.set("since", since); else url.searchParams.delete("since");
  history.replaceState(null, "", url);
  load();
});
sinceInput.value = since.slice(0, 10);
load();
