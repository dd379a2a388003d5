// touchmove: the board tile used by the spectator grid and the arbiter page.

import { createBoard, drawPosition } from "/assets/board.js";
import { el, ClockPair, paintClock, resultText, moveLabel } from "/assets/live.js";

function playerRow(side) {
  const name = el("span", { class: "name" });
  const elo = el("span", { class: "elo" });
  const clock = el("span", { class: "clock" });
  const row = el("div", { class: `player ${side}` }, el("span", { class: `dot ${side}` }), name, elo, clock);
  return { row, name, elo, clock };
}

/// A tile for one game; `href` makes it a link (spectators), `onSelect` a button (arbiter).
/// `openAlerts(board)` gives the number of alerts the arbiter has to decide (the desk only:
/// spectators see decisions, never alerts).
export function createTile(summary, { href, onSelect, openAlerts } = {}) {
  const board = createBoard({ coordinates: false });
  const black = playerRow("black");
  const white = playerRow("white");
  const number = el("span", { class: "board-no" });
  const last = el("span", { class: "last" });
  const result = el("span", { class: "result" });
  const badge = el("span", { class: "badge", hidden: true });
  const attrs = { class: "tile", "data-board": summary.board };
  const root = href ? el("a", { ...attrs, href }) : el("div", { ...attrs, tabindex: 0, role: "button" });
  if (onSelect) {
    root.addEventListener("click", () => onSelect(summary.board));
    root.addEventListener("keydown", (e) => { if (e.key === "Enter") onSelect(summary.board); });
  }
  root.append(
    el("div", { class: "tile-head" }, number, badge, last, result),
    black.row,
    el("div", { class: "board-wrap" }, board),
    white.row,
  );
  const tile = { root, board, black, white, number, last, result, badge, openAlerts, clocks: new ClockPair() };
  updateTile(tile, summary);
  return tile;
}

/// Shows a new state of the game.
export function updateTile(tile, g) {
  tile.summary = g;
  tile.number.textContent = `Board ${g.board}`;
  tile.black.name.textContent = g.black || "Black";
  tile.white.name.textContent = g.white || "White";
  tile.black.elo.textContent = g.black_elo || "";
  tile.white.elo.textContent = g.white_elo || "";
  tile.last.textContent = g.after_game || (g.ply ? moveLabel(g.ply, g.last_san) : "Not started");
  tile.result.textContent = resultText(g.result);
  tile.result.title = g.reason || "";
  tile.root.classList.toggle("finished", Boolean(g.result));
  tile.root.classList.toggle("held", Boolean(g.held));
  tile.root.classList.toggle("after-game", Boolean(g.after_game));
  const alerts = tile.openAlerts ? tile.openAlerts(g.board) : 0;
  tile.badge.hidden = !(alerts > 0 || g.held);
  tile.badge.textContent = g.held ? "Held" : `${alerts} alert${alerts === 1 ? "" : "s"}`;
  tile.board.dataset.lastSan = g.last_san || "";
  drawPosition(tile.board, g.fen, g.last_move, g.held ? g.differing : []);
  tile.clocks.set(g.clock, g.result);
  paintTileClocks(tile);
}

/// Repaints the two clocks of a tile (called by the page's ticker).
export function paintTileClocks(tile) {
  paintClock(tile.white.clock, tile.clocks, "white");
  paintClock(tile.black.clock, tile.clocks, "black");
}

/// Keeps a grid of tiles in board order inside `container`.
export class TileGrid {
  constructor(container, options) {
    this.container = container;
    this.options = options;
    this.tiles = new Map();
  }
  reset(games) {
    this.tiles.clear();
    this.container.replaceChildren();
    for (const g of games) this.update(g);
  }
  update(g) {
    const existing = this.tiles.get(g.board);
    if (existing) { updateTile(existing, g); return existing; }
    const tile = createTile(g, this.options(g));
    this.tiles.set(g.board, tile);
    const after = [...this.tiles.keys()].filter((b) => b > g.board).sort((a, b) => a - b)[0];
    const before = after !== undefined ? this.tiles.get(after).root : null;
    this.container.insertBefore(tile.root, before);
    return tile;
  }
  paintClocks() { for (const t of this.tiles.values()) paintTileClocks(t); }
  /// Shows every tile again (its badge after the alerts changed).
  repaint() { for (const t of this.tiles.values()) updateTile(t, t.summary); }
}
