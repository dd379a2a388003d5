// touchmove: one game — large board, move list, clocks, PGN download.

import { installSprite, createBoard, drawPosition } from "/assets/board.js";
import { el, connect, pathNumbers, ClockPair, paintClock, resultText, eventName, tick, followRounds } from "/assets/live.js";

installSprite();
const { round, board } = pathNumbers();
// A new round: the same board of the new round, or the new round's grid if it has no such board.
followRounds(round, async (next) => {
  let known = false;
  try { known = (await fetch(`/api/round/${next}/game/${board}`)).ok; } catch { known = false; }
  location.assign(known ? `/round/${next}/game/${board}` : `/round/${next}`);
});
const svg = createBoard();
document.getElementById("board").append(svg);
const $ = (id) => document.getElementById(id);
$("back").href = `/round/${round}`;
$("pgn-link").href = `/round/${round}/game/${board}.pgn`;
$("pgn-link").setAttribute("download", `round-${round}-board-${board}.pgn`);
$("game-sub").textContent = `Round ${round} · Board ${board}`;

const clocks = new ClockPair();
let moves = [];
let startFen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
let summary = null;
let viewing = null; // null = follow the live position; otherwise a ply (0 = start)

function showPosition() {
  const ply = viewing === null ? moves.length : viewing;
  const move = ply > 0 ? moves[ply - 1] : null;
  svg.dataset.lastSan = move ? move.san : "";
  const held = viewing === null && summary && summary.held ? summary.differing : [];
  drawPosition(svg, move ? move.fen : startFen, move ? move.uci : null, held);
  for (const li of document.querySelectorAll("#moves .mv")) {
    li.classList.toggle("current", Number(li.dataset.ply) === ply);
  }
  $("nav-live").classList.toggle("primary", viewing !== null);
}

function renderMoves() {
  const button = (m) => el("button", {
    class: "mv", "data-ply": m.ply,
    onclick: () => { viewing = m.ply === moves.length ? null : m.ply; showPosition(); },
  }, m.san);
  const rows = [];
  let open = null; // the row whose Black move is still missing
  for (const m of moves) {
    if (m.side === "black" && open) {
      open.black.replaceWith(button(m));
      open = null;
      continue;
    }
    const black = el("span", { class: "mv empty" });
    const white = m.side === "white" ? button(m) : el("span", { class: "mv empty" }, "…");
    const row = el("li", {}, el("span", { class: "num" }, `${Math.ceil(m.ply / 2)}.`), white, black);
    if (m.side === "black") row.replaceChild(button(m), black);
    rows.push(row);
    open = m.side === "white" ? { black } : null;
  }
  const list = $("moves");
  list.replaceChildren(...rows);
  if (viewing === null) list.scrollTop = list.scrollHeight;
}

function renderSummary(g) {
  summary = g;
  $("white-name").textContent = g.white || "White";
  $("black-name").textContent = g.black || "Black";
  $("white-elo").textContent = g.white_elo || "";
  $("black-elo").textContent = g.black_elo || "";
  $("game-title").textContent = `${g.white || "White"} – ${g.black || "Black"}`;
  document.title = `${g.white || "White"} – ${g.black || "Black"} · touchmove`;
  $("result").textContent = g.result ? resultText(g.result) : (g.held ? "Play held by the arbiter" : "Game in progress");
  $("reason").textContent = [g.reason, g.after_game].filter(Boolean).join(" · ");
  clocks.set(g.clock, g.result);
}

function renderTags(tags) {
  const shown = (tags || []).filter(([k]) => !["White", "Black", "Result", "FEN", "SetUp"].includes(k));
  $("tags").replaceChildren(...shown.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  const name = eventName(tags);
  if (name) $("game-sub").textContent = `${name} · Round ${round} · Board ${board}`;
}

function loadDetail(detail) {
  if (!detail) { $("result").textContent = "No such game yet"; return; }
  startFen = detail.start_fen;
  moves = detail.moves;
  renderSummary(detail);
  renderTags(detail.tags);
  renderMoves();
  showPosition();
}

const onSummary = (data) => { if (data.game) { renderSummary(data.game); showPosition(); } };
connect(`/api/round/${round}/game/${board}/stream`, {
  snapshot: loadDetail,
  move: (data) => {
    const e = data.event;
    moves = moves.slice(0, e.ply - 1);
    moves.push({ ply: e.ply, san: e.san, uci: e.uci, side: e.side, fen: e.fen, t_ms: e.t_ms });
    renderMoves();
    onSummary(data);
  },
  revision: (data) => { moves = moves.slice(0, data.event.ply - 1); if (viewing !== null && viewing > moves.length) viewing = null; renderMoves(); onSummary(data); },
  game_start: async () => loadDetail(await (await fetch(`/api/round/${round}/game/${board}`)).json()),
  game: async () => renderTags((await (await fetch(`/api/round/${round}/game/${board}`)).json()).tags),
  move_completed: onSummary, clock: onSummary, alert: onSummary, board_state: onSummary, result: onSummary, game_closed: onSummary, arbiter: onSummary,
}, $("status"));

$("nav-first").onclick = () => { viewing = 0; showPosition(); };
$("nav-prev").onclick = () => { const p = viewing === null ? moves.length : viewing; viewing = Math.max(0, p - 1); showPosition(); };
$("nav-next").onclick = () => { if (viewing === null) return; viewing = viewing + 1 >= moves.length ? null : viewing + 1; showPosition(); };
$("nav-live").onclick = () => { viewing = null; showPosition(); };
document.addEventListener("keydown", (e) => {
  if (e.key === "ArrowLeft") $("nav-prev").click();
  if (e.key === "ArrowRight") $("nav-next").click();
});
tick(() => { paintClock($("white-clock"), clocks, "white"); paintClock($("black-clock"), clocks, "black"); });
