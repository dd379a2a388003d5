// touchmove: the arbiter's alerts — one decision per irregularity, and a close look at any
// alert: the board before and after its ply, the moves, the time of day and both clocks.

import { createBoard, drawPosition } from "/assets/board.js";
import { el, formatClock, resultText } from "/assets/live.js";

const START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

const capital = (side) => (side ? side[0].toUpperCase() + side.slice(1) : "");
const other = (side) => (side === "white" ? "black" : "white");
const isPenalty = (a) => a.article.startsWith("7.5") && a.severity !== "info" && a.side;

/// "23. Nf3" style label of a ply.
function plyLabel(ply) {
  return `move ${Math.ceil(ply / 2)}${ply % 2 ? "" : "…"} (ply ${ply})`;
}

/// Groups the alerts that still wait for the arbiter (or that the game's end overtook) into
/// irregularities: every Article 7.5 alert of one player at one ply is one irregularity (the
/// illegal move and its 7.5.5 penalty proposal), any other alert stands alone.
export function irregularities(alerts) {
  const groups = new Map();
  for (const a of alerts) {
    if (a.severity === "info" || !["open", "open_after_end", "overtaken"].includes(a.state)) continue;
    const key = isPenalty(a) ? `${a.board}:${a.ply}:${a.side}:penalty` : `${a.board}:${a.ply}:${a.article}:${a.t_ms}`;
    if (!groups.has(key)) groups.set(key, { key, board: a.board, ply: a.ply, side: a.side, penalty: isPenalty(a), alerts: [] });
    groups.get(key).alerts.push(a);
  }
  for (const g of groups.values()) {
    g.state = g.alerts.some((a) => a.state === "open") ? "open"
      : g.alerts.some((a) => a.state === "open_after_end") ? "open_after_end" : "overtaken";
    g.articles = [...new Set(g.alerts.map((a) => a.article))].sort();
    // The irregularity itself first, the 7.5.5 proposal (what follows) apart.
    g.proposal = g.alerts.find((a) => a.article === "7.5.5") || null;
    g.main = g.alerts.find((a) => a.article !== "7.5.5") || g.alerts[0];
  }
  return [...groups.values()];
}

/// The plies at which `side` on `board` was given a penalty (decided, "penalty applied").
function penaltiesGiven(alerts, board, side) {
  const plies = alerts
    .filter((a) => a.board === board && a.side === side && a.state === "decided" && a.decision === "penalty applied")
    .map((a) => a.ply);
  return [...new Set(plies)];
}

/// What applying the penalty does, as the recorder applies it (7.5.5): time to the opponent
/// the first time, the game lost the second time.
export function consequence(group, alerts) {
  const earlier = penaltiesGiven(alerts, group.board, group.side).filter((p) => p !== group.ply);
  const who = capital(group.side);
  if (earlier.length > 0) {
    return `Second penalty for ${who} (the first at ply ${earlier[0]}): applying it ends the game, ${who} loses (7.5.5).`;
  }
  const minutes = group.proposal && /(\d+) minutes?/.exec(group.proposal.message);
  const time = minutes ? minutes[0] : "time";
  return `First penalty for ${who}: applying it adds ${time} to ${capital(other(group.side))}'s clock (7.5.5); a second one would lose the game.`;
}

/// The time of day an alert was raised, or its time since the recorder started when the
/// server does not know the clock time.
function timeOfDay(a) {
  if (a.at_unix_ms) return new Date(a.at_unix_ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return `${formatClock(a.t_ms)} after the recorder started`;
}

function clocksText(a) {
  if (!a.clocks) return "no clock reading yet";
  return `White ${formatClock(a.clocks.white_ms)} · Black ${formatClock(a.clocks.black_ms)}`;
}

/// The buttons deciding a group: one penalty decision for an irregularity, otherwise an
/// acknowledgement; the order of moves nobody saw, when the alert asks for it.
function decisionButtons(group, ctx) {
  const a = group.main;
  const buttons = [];
  if (group.penalty) {
    buttons.push(
      el("button", { class: "button danger", "data-decide": "apply", onclick: () => ctx.act(group.board, { action: "decide_penalty", ply: group.ply, accept: true }, `penalty applied (Art. ${group.articles.join(", ")})`) }, "Apply penalty"),
      el("button", { class: "button", "data-decide": "none", onclick: () => ctx.act(group.board, { action: "decide_penalty", ply: group.ply, accept: false }, `no penalty (Art. ${group.articles.join(", ")})`) }, "No penalty"),
    );
  }
  const orders = a.gap && a.gap.kind === "orders" ? a.gap : null;
  if (orders) {
    buttons.push(
      el("button", { class: "button", onclick: () => ctx.act(a.board, { action: "settle_order", ply: a.ply, pick: 0 }, `order from ply ${a.ply} confirmed`) }, `Confirm ${orders.recorded.join(" ")}`),
      ...orders.others.map((line, i) => el("button", { class: "button", onclick: () => ctx.act(a.board, { action: "settle_order", ply: a.ply, pick: i + 1 }, `order from ply ${a.ply}: ${line.join(" ")}`) }, `Pick ${line.join(" ")}`)),
    );
  }
  if (!group.penalty) {
    buttons.push(el("button", { class: "button", onclick: () => ctx.act(a.board, { action: "annotate", ply: a.ply, text: `Arbiter saw alert ${a.article}: ${a.message}` }, `alert ${a.article} acknowledged`) }, group.state === "overtaken" ? "Dismiss" : "Acknowledge"));
  }
  return buttons;
}

/// Why a group waits although its game ended.
function endNote(group, ctx) {
  const g = ctx.game(group.board);
  const result = g && g.result ? `${resultText(g.result)}${g.reason ? ` (${g.reason})` : ""}` : "";
  if (group.state === "open_after_end") return `The game ended ${result} before a decision; the penalty can still change the record.`;
  if (group.state === "overtaken") return `Overtaken: the game ended ${result} before a decision.`;
  return null;
}

/// One card of the queue: one irregularity, one decision.
export function decisionCard(group, alerts, ctx) {
  const a = group.main;
  const note = endNote(group, ctx);
  return el("li", { class: `decision ${a.severity} ${group.state}`, "data-board": group.board, "data-ply": group.ply },
    el("div", { class: "decision-head" },
      el("span", { class: "article" }, `Art. ${group.articles.join(" · ")}`),
      ` Board ${group.board}`, group.side ? ` · ${capital(group.side)}` : "", ` · ${plyLabel(group.ply)}`,
      el("span", { class: "when" }, timeOfDay(a))),
    el("p", {}, a.message),
    group.penalty ? el("p", { class: "follows" }, el("strong", {}, "What follows: "), consequence(group, alerts)) : null,
    note ? el("p", { class: "evidence" }, note) : null,
    el("div", { class: "button-row" },
      ...(group.state === "overtaken" ? [] : decisionButtons(group, ctx)),
      el("button", { class: "button ghost", "data-look": "", onclick: () => ctx.look(group) }, "Look"),
      ...(group.state === "overtaken" ? decisionButtons(group, ctx) : [])));
}

/// Shows `group` in the dialog `dialog`: the board before and after its ply, the moves with
/// that ply marked, when it happened and both clocks, and the same decision as the card.
export async function inspect(dialog, group, alerts, ctx) {
  const $ = (sel) => dialog.querySelector(sel);
  let game = null;
  try { game = await ctx.detail(group.board); } catch { game = null; }
  const moves = (game && game.moves) || [];
  const startFen = (game && game.start_fen) || START_FEN;
  const a = group.main;
  $(".inspector-title").textContent = `Board ${group.board} · Art. ${group.articles.join(" · ")}${group.side ? ` · ${capital(group.side)}` : ""} · ${plyLabel(group.ply)}`;
  $(".inspector-players").textContent = game ? `${game.white || "White"} – ${game.black || "Black"}` : "";
  $(".inspector-when").textContent = `Raised at ${timeOfDay(a)}`;
  $(".inspector-clocks").textContent = `Clocks then: ${clocksText(a)}`;
  const before = moves[group.ply - 2];
  const played = moves[group.ply - 1];
  const beforeBoard = createBoard();
  beforeBoard.dataset.lastSan = before ? before.san : "";
  drawPosition(beforeBoard, before ? before.fen : startFen, before ? before.uci : null);
  const afterBoard = createBoard();
  if (played) {
    afterBoard.dataset.lastSan = played.san;
    drawPosition(afterBoard, played.fen, played.uci, a.squares);
  } else {
    drawPosition(afterBoard, before ? before.fen : startFen, null, a.squares);
  }
  $(".inspector-before").replaceChildren(beforeBoard);
  $(".inspector-after").replaceChildren(afterBoard);
  $(".inspector-before-caption").textContent = group.ply > 1 ? `Before ply ${group.ply}` : "Before the first move";
  $(".inspector-after-caption").textContent = played
    ? `After ply ${group.ply}: ${played.san}${a.squares.length ? ` (squares ${a.squares.join(" ")} outlined)` : ""}`
    : `Ply ${group.ply} not recorded${a.squares.length ? `: the board differed on ${a.squares.join(" ")}` : ""}`;
  $(".inspector-message").replaceChildren(
    ...group.alerts.map((x) => el("p", {}, el("span", { class: "article" }, `Art. ${x.article}`), " ", x.message)),
    group.penalty ? el("p", { class: "follows" }, el("strong", {}, "What follows: "), consequence(group, alerts)) : null,
  );
  const pairs = [];
  for (const m of moves) {
    const last = pairs[pairs.length - 1];
    if (m.side === "black" && last && last.white && !last.black) last.black = m;
    else pairs.push(m.side === "white" ? { white: m, black: null } : { white: null, black: m });
  }
  const cell = (m) => (m ? el("span", { class: `mv${m.ply === group.ply ? " current" : ""}` }, m.san) : el("span", { class: "mv empty" }));
  const rows = pairs.map((p) => el("li", {}, el("span", { class: "num" }, `${Math.ceil((p.white || p.black).ply / 2)}.`), cell(p.white), cell(p.black)));
  if (!played) rows.push(el("li", { class: "flagged-missing" }, el("span", { class: "num" }, "⚑"), el("span", { class: "mv current" }, `ply ${group.ply}`), el("span", { class: "mv empty" }, "not recorded")));
  $(".inspector-moves").replaceChildren(...rows);
  $(".inspector-actions").replaceChildren(
    ...(group.state === "overtaken" ? [] : decisionButtons(group, { ...ctx, act: async (...args) => { const ok = await ctx.act(...args); if (ok) dialog.close(); return ok; } })),
    el("button", { class: "button", onclick: () => { ctx.select(group.board); dialog.close(); } }, "Board controls"),
    el("button", { class: "button ghost", onclick: () => dialog.close() }, "Close"),
  );
  if (!dialog.open) dialog.showModal();
  const current = $(".inspector-moves .current");
  if (current) current.scrollIntoView({ block: "nearest" });
}
