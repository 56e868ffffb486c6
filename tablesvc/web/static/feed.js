// The tiny store every page shares: one EventSource, one model, a render callback.
// The server sends a snapshot first (or, after a reconnection, every message the page missed:
// the browser sends Last-Event-ID = the seq of the last state it got), then each change.

export const WINDS = ["East", "South", "West", "North"];

export function pathParts() {
  // /overlay/<site>/<table>, /table/<site>/<table>, /referee/<site>/<table>
  const parts = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  return { site: parts[1], table: parts[2] };
}

export function seatName(state, seat) {
  if (seat === null || seat === undefined || seat < 0 || seat > 3) return "?";
  const s = state && state.seats && state.seats[seat];
  return (s && s.name) || WINDS[seat];
}

// One notation for file names: mjai ("5mr" red five, "E".."C" honours). Accepts "0m"/"5m0"/"1z".. too.
const HONOURS = ["E", "S", "W", "N", "P", "F", "C"];
export function tileName(t) {
  if (!t || typeof t !== "string") return null;
  if (/^[1-9][mps]$/.test(t) || HONOURS.includes(t)) return t;
  if (/^5[mps]r$/.test(t)) return t;
  if (/^0[mps]$/.test(t)) return "5" + t[1] + "r";
  if (/^5[mps]0$/.test(t)) return "5" + t[1] + "r";
  if (/^[1-7]z$/.test(t)) return HONOURS[Number(t[0]) - 1];
  return null;
}

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

// A tile: an <img> of the project's SVG face; "turned" lies sideways (riichi, called into a meld).
export function tile(t, cls = "") {
  const name = tileName(t);
  const img = el("img", { class: "tile-face", src: `/tiles/${name || "back"}.svg`, alt: t || "?", draggable: "false" });
  return el("span", { class: `tile ${cls}`.trim(), "data-tile": name || String(t) }, img);
}

export function back(cls = "") {
  return el("span", { class: `tile back ${cls}`.trim(), "data-tile": "back" },
    el("img", { class: "tile-face", src: "/tiles/back.svg", alt: "back", draggable: "false" }));
}

export function signed(v) {
  if (typeof v !== "number") return "";
  return v > 0 ? `+${v.toLocaleString("en")}` : v < 0 ? `−${(-v).toLocaleString("en")}` : "±0";
}

export function points(v) {
  return typeof v === "number" ? v.toLocaleString("en") : "—";
}

export function connect(url, model, render) {
  model.status = model.status || null;
  model.state = model.state || null;
  model.results = model.results || [];
  model.final = model.final || null;
  model.devices = model.devices || {};
  model.sticks = model.sticks || null;
  model.alerts = model.alerts || [];
  model.connected = false;
  model.messages = 0;
  model.snapshots = 0; // 1 for a page that resumed every reconnection from Last-Event-ID
  let pending = false;
  const schedule = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      render(model);
      const seq = model.state && model.state.seq;
      if (seq !== undefined && seq !== null) document.body.dataset.seq = seq;
      document.body.dataset.results = model.results.length;
      document.body.dataset.connected = model.connected ? "yes" : "no";
      document.body.dataset.snapshots = model.snapshots;
    });
  };
  const source = new EventSource(url);
  const on = (name, f) => source.addEventListener(name, (ev) => {
    model.messages += 1;
    try { f(JSON.parse(ev.data)); } catch (err) { console.error(name, err); }
    schedule();
  });
  on("snapshot", (d) => {
    model.snapshots += 1;
    model.status = d.status; model.since = d.since; model.state = d.state; model.results = d.results || [];
    model.final = d.final || null; model.devices = d.devices || {}; model.alerts = d.alerts || [];
    model.sticks = d.sticks || null;
    model.handState = d.state && d.state.phase === "playing" ? d.state : null;
  });
  on("state", (d) => {
    model.state = d;
    // the last state of a hand in play: between hands the feed's ponds are empty, and pages keep showing it
    if (d && d.phase === "playing") model.handState = d;
    else if (d && (d.phase === "not_started" || d.phase === "game_over")) model.handState = null;
  });
  on("status", (d) => { model.status = d.status; model.since = d.since; });
  on("results", (d) => { model.results = d.results || []; model.final = d.final || null; model.latest = d.latest; });
  on("device", (d) => { model.devices[d.name] = d.health; });
  on("sticks", (d) => { model.sticks = d; });
  on("alert", (d) => { model.alerts.push(d); model.alerts = model.alerts.slice(-50); });
  on("alerts", (d) => { model.alerts = d.alerts || []; }); // a new game: the last game's alerts go
  on("tables", (d) => { model.tables = d.tables || []; });
  on("server", (d) => { model.server = d; });
  on("table", (d) => {
    model.tables = model.tables || [];
    const i = model.tables.findIndex((t) => t.site === d.site && t.table === d.table);
    if (i >= 0) model.tables[i] = d; else model.tables.push(d);
    model.tables.sort((a, b) => (a.site + "/" + a.table).localeCompare(b.site + "/" + b.table));
  });
  // a page left for another one may be kept in the browser's back-forward cache with its stream open: the
  // browser holds six connections to a server at most, so a referee who looked at six pages could send no
  // command. The stream is closed when the page is left, and the page reloaded if it is shown again.
  addEventListener("pagehide", () => source.close());
  addEventListener("pageshow", (ev) => { if (ev.persisted) location.reload(); });
  source.onopen = () => { model.connected = true; schedule(); };
  source.onerror = () => { model.connected = false; schedule(); };
  window.tablesvcFeed = { model, source };
  schedule();
  return source;
}

export function ago(ts) {
  if (!ts) return "";
  return span(Date.now() / 1000 - ts);
}

// a duration in seconds, as people say it: "42 s", "17 min", "2 h 5 min"
export function span(seconds) {
  const s = Math.max(0, seconds);
  if (s < 60) return `${Math.floor(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
