// touchmove: the arbiter's desk — every board, the alerts, pending decisions and controls.
// The token lives in sessionStorage and travels only in the Authorization header (never a
// cookie), so another site cannot make this browser act as the arbiter.

import { installSprite } from "/assets/board.js";
import { el, connectWith, pathNumbers, tick, followRounds, delayText } from "/assets/live.js";
import { TileGrid } from "/assets/tiles.js";
import { irregularities, decisionCard, inspect } from "/assets/alerts.js";

installSprite();
const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem("touchmove-arbiter-token") || "";
let round = pathNumbers().round;
let selected = null;
let alerts = [];

const grid = new TileGrid($("grid"), () => ({ onSelect: select, openAlerts }));

/// The irregularities of `board` still to decide (the tile's badge).
function openAlerts(board) {
  return irregularities(alerts).filter((g) => g.board === board && g.state !== "overtaken").length;
}

async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: { ...(options.headers || {}), Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
  });
  let body = {};
  try { body = await response.json(); } catch { body = {}; }
  return { ok: response.ok, status: response.status, body };
}

/// The desk's log lives in sessionStorage too: the page reloads when the event moves to the
/// next round, and what the arbiter did just before (the round change itself) must stay.
const LOG_KEY = "touchmove-arbiter-log";
const LOG_KEPT = 200;

function showLogEntry({ time, text, ok }) {
  $("log").prepend(el("li", { class: ok ? "ok" : "fail" }, el("time", {}, time), " ", text));
}

function keptLog() {
  try { return JSON.parse(sessionStorage.getItem(LOG_KEY)) || []; } catch { return []; }
}

function log(text, ok = true) {
  const entry = { time: new Date().toLocaleTimeString(), text, ok };
  showLogEntry(entry);
  sessionStorage.setItem(LOG_KEY, JSON.stringify([...keptLog(), entry].slice(-LOG_KEPT)));
}

function restoreLog() {
  for (const entry of keptLog()) showLogEntry(entry);
}

/// A key for one action: random, and readable where crypto.randomUUID is not (plain http).
function actionKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/// Answers that leave it unknown whether the recorder applied the action: no answer at all,
/// or a node that gave up waiting. Sent again with the same key, it is applied at most once.
const UNANSWERED = [0, 502, 503, 504];

async function act(board, action, label) {
  const body = JSON.stringify({ round, board, key: actionKey(), action });
  let answer;
  for (let attempt = 1; ; attempt++) {
    try {
      answer = await api("/api/arbiter/action", { method: "POST", body });
    } catch (e) {
      answer = { ok: false, status: 0, body: { error: `no answer (${e.message})` } };
    }
    if (answer.ok || !UNANSWERED.includes(answer.status) || attempt === 3) break;
    log(`Board ${board}: ${label} — ${answer.body.error || "no answer"}; asking again (the action is applied once)`, false);
    await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
  }
  const { ok, body: reply } = answer;
  log(`Board ${board}: ${label} — ${ok ? reply.message || "done" : reply.error || "refused"}`, ok);
  if (ok) refreshAlerts();
  return ok;
}

function select(board) {
  selected = board;
  for (const [b, tile] of grid.tiles) tile.root.classList.toggle("selected", b === board);
  const g = grid.tiles.get(board)?.summary;
  $("controls-title").textContent = `Board ${board}`;
  $("controls-players").textContent = g ? `${g.white || "White"} – ${g.black || "Black"} · ${g.ply} plies${g.result ? ` · ${g.result}` : ""}` : "";
  $("controls-body").hidden = false;
}

/// The round being recorded, live (the public's pages may follow it later).
async function liveRound() {
  const { ok, body } = await api("/api/arbiter/current");
  return ok ? body.round ?? null : null;
}

/// A game as it stands now (the public's API may show it later).
async function liveGame(board) {
  const { ok, body } = await api(`/api/arbiter/round/${round}/game/${board}`);
  return ok ? body : null;
}

/// The public broadcast's delay: this round's, and the one chosen for the rounds to come.
async function refreshDelay() {
  const { ok, body } = await api("/api/arbiter/broadcast-delay");
  if (!ok) return;
  const chosen = body.chosen && body.chosen.from_round > round
    ? ` · from round ${body.chosen.from_round}: ${delayText(body.chosen.delay_ms)}` : "";
  $("delay-now").textContent = body.delay_ms
    ? `The public sees round ${round} ${delayText(body.delay_ms)} late${chosen}.`
    : `The public sees round ${round} live${chosen}.`;
  $("delay-choice").hidden = !body.can_choose;
}

/// What the alert cards need from the desk.
const cardContext = () => ({
  round,
  act,
  select,
  detail: liveGame,
  game: (board) => grid.tiles.get(board)?.summary,
  look: (group) => inspect($("inspector"), group, alerts, cardContext()),
});

function renderQueue() {
  const items = [];
  for (const tile of grid.tiles.values()) {
    const g = tile.summary;
    if (g.held) {
      items.push(el("li", { class: "decision critical" },
        el("div", { class: "decision-head" }, el("span", { class: "article" }, "7.4 / 7.6"), ` Board ${g.board}`),
        el("p", {}, `The board does not match the game${g.differing.length ? ` (${g.differing.join(", ")})` : ""}. Play is held until the position is restored.`),
        el("div", { class: "button-row" }, el("button", { class: "button", onclick: () => select(g.board) }, "Open board"))));
    }
    if (g.after_game && !g.result) {
      const result = (r) => el("button", { class: "button", onclick: () => act(g.board, { action: "set_result", result: r, reason: "arbiter decision" }, `result ${r}`) }, r);
      items.push(el("li", { class: "decision warning" },
        el("div", { class: "decision-head" }, el("span", { class: "article" }, "Result"), ` Board ${g.board}`),
        el("p", {}, `${g.after_game}. The game keeps its ${g.ply} plies until its result is entered.`),
        el("div", { class: "button-row" }, result("1-0"), result("1/2-1/2"), result("0-1"),
          g.restart_asked ? el("button", { class: "button danger", onclick: () => confirm(`Restart board ${g.board}? The ${g.ply} plies stay in its file, before the new game.`) && act(g.board, { action: "new_game" }, "new game") }, "Restart: new game") : null,
          el("button", { class: "button ghost", onclick: () => select(g.board) }, "Open board"))));
    }
  }
  const groups = irregularities(alerts);
  const overtaken = [];
  for (const group of groups) {
    const card = decisionCard(group, alerts, cardContext());
    if (group.state === "overtaken") overtaken.push(card);
    else items.push(card);
  }
  $("queue").replaceChildren(...items);
  $("queue-count").textContent = String(items.length);
  $("queue-empty").hidden = items.length > 0;
  $("overtaken").hidden = overtaken.length === 0;
  $("overtaken-count").textContent = String(overtaken.length);
  $("overtaken-list").replaceChildren(...overtaken);
  grid.repaint();
}

let alertTimer = null;
function refreshAlerts() {
  clearTimeout(alertTimer);
  alertTimer = setTimeout(async () => {
    const { ok, body } = await api(`/api/round/${round}/alerts`);
    if (!ok || !Array.isArray(body)) return;
    alerts = body;
    renderQueue();
  }, 150);
}

function wireControls() {
  for (const b of document.querySelectorAll("[data-result]")) {
    b.onclick = () => selected && act(selected, { action: "set_result", result: b.dataset.result, reason: $("result-reason").value || "arbiter decision" }, `result ${b.dataset.result}`);
  }
  for (const b of document.querySelectorAll("[data-time]")) {
    const [side, delta] = b.dataset.time.split(":");
    b.onclick = () => selected && act(selected, { action: "adjust_time", side, delta_ms: Number(delta) }, b.textContent);
  }
  for (const b of document.querySelectorAll("[data-claim]")) {
    b.onclick = () => selected && act(selected, { action: "check_claim", claim: b.dataset.claim, intended_move: null }, b.textContent);
  }
  $("take-back").onclick = () => {
    const g = selected && grid.tiles.get(selected)?.summary;
    if (g && g.ply > 0) act(selected, { action: "take_back", to_ply: g.ply - 1 }, `take back to ply ${g.ply - 1}`);
  };
  $("new-game").onclick = () => selected && confirm(`Start a new game on board ${selected}?`) && act(selected, { action: "new_game" }, "new game");
  $("annotate").onclick = () => {
    const g = selected && grid.tiles.get(selected)?.summary;
    const text = $("note").value.trim();
    if (g && text) act(selected, { action: "annotate", ply: g.ply, text }, "note added").then((ok) => { if (ok) $("note").value = ""; });
  };
  $("lock").onclick = () => {
    sessionStorage.removeItem("touchmove-arbiter-token");
    sessionStorage.removeItem(LOG_KEY);
    location.reload();
  };
  $("delay-set").onclick = async () => {
    const delay = $("delay-next").value.trim();
    if (!delay) return;
    let answer;
    try {
      answer = await api("/api/arbiter/broadcast-delay", { method: "POST", body: JSON.stringify({ delay }) });
    } catch (e) {
      answer = { ok: false, body: { error: `no answer (${e.message})` } };
    }
    log(answer.ok ? answer.body.message : `Broadcast delay refused — ${answer.body.error || "no answer"}`, answer.ok);
    refreshDelay();
  };
  $("next-round").onclick = async () => {
    if (!confirm(`Close round ${round} and start round ${round + 1}? Round ${round}'s games are kept; `
      + "the boards are read again with the next round's pairings.")) return;
    $("next-round").disabled = true;
    // The request names the round it closes: sent again, or from a page that has not followed
    // the event yet, it is refused rather than closing the round after.
    let answer;
    try {
      answer = await api("/api/arbiter/next-round", { method: "POST", body: JSON.stringify({ round }) });
    } catch (e) {
      answer = { ok: false, body: { error: `no answer (${e.message}); if round ${round + 1} started, this page moves to it by itself` } };
    }
    const { ok, body } = answer;
    log(ok ? body.message || `round ${round + 1} starts` : `Next round refused — ${body.error || "no answer"}`, ok);
    if (!ok) $("next-round").disabled = false;
  };
}

async function startDesk() {
  $("login").hidden = true;
  $("desk").hidden = false;
  $("lock").hidden = false;
  $("next-round").hidden = false;
  restoreLog();
  if (round === null) round = (await liveRound()) ?? 1;
  $("round-label").textContent = `Round ${round}`;
  $("next-round").textContent = `Start round ${round + 1}`;
  wireControls();
  followRounds(round, () => location.reload(), 2000, liveRound);
  const onGame = (data) => {
    if (data.game) grid.update(data.game);
    if (selected === data.board) select(selected);
    if (data.event && ["board_state", "result", "game_start", "game_closed"].includes(data.event.kind)) renderQueue();
  };
  const onAlert = (data) => { onGame(data); refreshAlerts(); };
  connectWith(`/api/arbiter/round/${round}/stream`, { Authorization: `Bearer ${token}` }, {
    snapshot: (data) => { grid.reset(data.games || []); if (selected) select(selected); refreshAlerts(); },
    game: onGame, game_start: onAlert, move: onGame, revision: onGame, move_completed: onGame,
    clock: onGame, board_state: onGame, result: onAlert, game_closed: onAlert, alert: onAlert, arbiter: onAlert,
  }, $("status"));
  tick(() => grid.paintClocks());
  refreshLinks();
  setInterval(refreshLinks, LINK_POLL_MS);
  refreshDelay();
  setInterval(refreshDelay, LINK_POLL_MS);
}

// The recorder's links to the outside (lichess push, cluster backlog, web connections) from
// /api/status: problems in red at the top of the side bar, the counts below.
const LINK_POLL_MS = 5000;

function age(ms) {
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

function linkParts(status) {
  const parts = [];
  const l = status.lichess;
  if (l) {
    parts.push(l.failing
      ? `lichess ${l.round_id}: failing for ${age(status.now_unix_ms - l.failing_since_unix_ms)}, ${l.retries} retries — ${l.last_error || "unknown error"}`
      : `lichess ${l.round_id}: ${l.accepted} pushes accepted`);
  }
  const c = status.cluster;
  if (c) {
    parts.push(c.entries === 0
      ? `cluster: all forwarded (up to entry ${c.acked})`
      : `cluster: ${c.entries} entries not acked, oldest ${age(c.oldest_ms)}${c.connected ? "" : " — unreachable"}`);
  }
  const w = status.web;
  if (w) {
    parts.push(`web: ${w.open} of ${w.max_open} connections open, ${w.refused} refused, ${w.header_timeouts + w.idle_timeouts} timed out`);
  }
  return parts;
}

async function refreshLinks() {
  let status;
  try { status = await (await fetch("/api/status")).json(); } catch { return; }
  $("links").dataset.state = status.problems.length ? "problem" : "well";
  $("link-problems").replaceChildren(...status.problems.map((p) => el("li", {}, p)));
  $("link-parts").replaceChildren(...linkParts(status).map((p) => el("li", {}, p)));
}

async function checkToken() {
  if (!token) return false;
  const { ok } = await api("/api/arbiter/session");
  return ok;
}

$("login-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  token = $("token").value.trim();
  if (await checkToken()) {
    sessionStorage.setItem("touchmove-arbiter-token", token);
    startDesk();
  } else {
    $("login-error").textContent = "That token was not accepted.";
  }
});

if (await checkToken()) startDesk();
else { $("login").hidden = false; $("status").textContent = "Locked"; $("status").dataset.state = "offline"; }
