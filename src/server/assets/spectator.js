// touchmove: the spectator grid — every board of a round, live.

import { installSprite } from "/assets/board.js";
import { el, connect, pathNumbers, eventName, tick, currentRound, followRounds } from "/assets/live.js";
import { TileGrid } from "/assets/tiles.js";

installSprite();
const grid = new TileGrid(document.getElementById("grid"), (g) => ({ href: `/round/${g.round}/game/${g.board}` }));
const empty = document.getElementById("empty");

async function chooseRound() {
  const { round } = pathNumbers();
  let rounds = [];
  try { rounds = await (await fetch("/api/rounds")).json(); } catch { rounds = []; }
  const numbers = rounds.map((r) => r.round);
  const nav = document.getElementById("rounds");
  const chosen = round ?? (await currentRound()) ?? (numbers.length ? numbers[numbers.length - 1] : 1);
  if (numbers.length > 1) {
    nav.replaceChildren(...numbers.map((n) => el("a", { href: `/round/${n}`, class: n === chosen ? "current" : "" }, `Round ${n}`)));
  }
  return chosen;
}

async function loadTitle(round) {
  try {
    const view = await (await fetch(`/api/round/${round}`)).json();
    const first = view.games && view.games[0];
    if (!first) return;
    const detail = await (await fetch(`/api/round/${round}/game/${first.board}`)).json();
    const name = eventName(detail.tags);
    if (name) {
      document.getElementById("event-title").textContent = name;
      document.title = `${name} · touchmove`;
    }
  } catch { /* the grid works without a title */ }
}

const round = await chooseRound();
followRounds(round, (next) => location.assign(`/round/${next}`));
document.getElementById("round-label").textContent = `Round ${round}`;
document.getElementById("round-pgn").href = `/round/${round}/games.pgn`;
loadTitle(round);

const onGame = (data) => {
  if (data.game) grid.update(data.game);
  empty.hidden = grid.tiles.size > 0;
};
connect(`/api/round/${round}/stream`, {
  snapshot: (data) => { grid.reset(data.games || []); empty.hidden = grid.tiles.size > 0; },
  game: onGame, game_start: onGame, move: onGame, revision: onGame, move_completed: onGame,
  clock: onGame, alert: onGame, board_state: onGame, result: onGame, game_closed: onGame, arbiter: onGame,
}, document.getElementById("status"));
tick(() => grid.paintClocks());
