// The tournament clock on every page (overlay, table page, console, dashboard, the /clock big screen).
// A table's state carries its clock's deadline (docs/mqtt.md, state.clock); pages count down to it on
// their own, four times a second, without re-rendering the page: every element made by clockBox()
// is updated in place. The web server's time is read from /api/time, so a big screen whose own clock
// is off still shows the hall's time.
import { el } from "/static/feed.js";

let offsetMs = 0; // the web server's clock minus this device's

export async function syncTime() {
  try {
    const before = Date.now();
    const r = await fetch("/api/time", { cache: "no-store" });
    const d = await r.json();
    const after = Date.now();
    if (typeof d.now === "number") offsetMs = d.now * 1000 - (before + after) / 2;
  } catch { /* keep the last offset: the countdown goes on with this device's clock */ }
}

export function nowMs() {
  return Date.now() + offsetMs;
}

// seconds of guaranteed time left now (0 once time is up), null without a deadline
export function remaining(clock) {
  if (!clock || clock.time_up || !clock.deadline) return clock && clock.time_up ? 0 : null;
  return Math.max(0, (Date.parse(clock.deadline) - nowMs()) / 1000);
}

// minutes and seconds as a hall clock shows them: 75:00, 4:09; 1:42:03 from 100 minutes on
export function countdown(seconds) {
  const s = Math.ceil(Math.max(0, seconds));
  const sec = String(s % 60).padStart(2, "0");
  if (s < 6000) return `${Math.floor(s / 60)}:${sec}`;
  return `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}:${sec}`;
}

export function handsLeft(n) {
  return n === 0 ? "last hand played" : n === 1 ? "1 hand left" : `${n} hands left`;
}

// what the clock shows now: the countdown, or after time the hands still to be played
export function clockText(clock, phase) {
  if (!clock) return "";
  if (phase === "game_over") return "finished";
  if (clock.time_up) return typeof clock.hands_left === "number" ? `time · ${handsLeft(clock.hands_left)}` : "time";
  const left = remaining(clock);
  return left === null ? "" : countdown(left);
}

export function clockState(clock, phase) {
  if (!clock) return "none";
  if (phase === "game_over") return "finished";
  if (clock.time_up) return "time-up";
  const left = remaining(clock);
  return left !== null && left <= 300 ? "ending" : "running";
}

const RULES = { ema: "then the hand in play and one more", finish_hand: "then the hand in play",
  more_hands: "then the hand in play and" };

export function ruleText(clock) {
  if (!clock) return "";
  const rule = clock.rule === "more_hands" ? `${RULES.more_hands} ${clock.more_hands} more` : RULES[clock.rule] || clock.rule;
  const extras = [clock.extended ? `+${clock.extended} min` : "", clock.added ? `+${clock.added} hand${clock.added === 1 ? "" : "s"}` : ""]
    .filter(Boolean).join(", ");
  return extras ? `${rule} (${extras})` : rule;
}

// a clock element that keeps counting by itself (null where the table has no clock)
export function clockBox(clock, phase, { cls = "", rule = true } = {}) {
  if (!clock) return null;
  const box = el("div", { class: `clock ${cls}`.trim(), "data-clock": clockState(clock, phase) },
    el("span", { class: "clock-time", text: clockText(clock, phase) }),
    rule ? el("span", { class: "clock-rule", text: ruleText(clock) }) : null);
  box.tablesvcClock = { clock, phase };
  return box;
}

function refresh() {
  for (const box of document.querySelectorAll(".clock")) {
    const c = box.tablesvcClock;
    if (!c) continue;
    const text = clockText(c.clock, c.phase);
    const time = box.querySelector(".clock-time");
    if (time && time.textContent !== text) time.textContent = text;
    const state = clockState(c.clock, c.phase);
    if (box.dataset.clock !== state) box.dataset.clock = state;
  }
}

setInterval(refresh, 250);
syncTime();
setInterval(syncTime, 60000);
