// touchmove: a small SVG chess board with our own piece drawings.
// Positions come from FEN; pieces are <use> references to one sprite per page.

const NS = "http://www.w3.org/2000/svg";
const SQ = 45;

// Piece drawings on a 45×45 grid, one group per role. Colours come from CSS classes
// (.pc-w / .pc-b) so the same shapes serve both sides.
const SHAPES = {
  p: `<path d="M22.5 9.5a5 5 0 0 0-3.1 8.9c-2.6 1.6-4.3 4.4-4.3 7.6 0 2.3.9 4.3 2.3 5.9h10.2c1.4-1.6 2.3-3.6 2.3-5.9 0-3.2-1.7-6-4.3-7.6a5 5 0 0 0-3.1-8.9z"/>
      <path d="M12.5 36.5c0-2.8 2.2-5 5-5h10c2.8 0 5 2.2 5 5v1.5h-20z"/>`,
  r: `<path d="M11.5 38h22v-3.2l-2.5-2.3v-12l2-2V10h-4.2v3.2h-3.4V10h-4.8v3.2h-3.4V10H12.8v8.5l2 2v12l-2.3 2.3z"/>
      <path class="pc-line" d="M14.8 20.5h15.4M14.8 32.5h15.4" fill="none"/>`,
  n: `<path d="M15 38h18.5c.6-7.5-.8-12.8-1.8-17.2C30.4 14.6 26.2 9.8 20 9.3l-1.6-3.6-2.2 4.2c-3.8 2-6.4 6-7.5 10.3-.5 2 .9 3.7 2.8 3.3 1.8-.4 3.3-1.6 5.2-1.9 2.2-.3 2.8 1.6 1.3 3.3-2.7 3-4.6 6.6-3 13.1z"/>
      <circle class="pc-eye" cx="17.2" cy="14.6" r="1.3"/>`,
  b: `<path d="M22.5 5a2.6 2.6 0 0 0-1.4 4.8c-4.6 3.4-7.1 8.3-5.6 13.4l1.4 2.9h11.2l1.4-2.9c1.5-5.1-1-10-5.6-13.4A2.6 2.6 0 0 0 22.5 5z"/>
      <path d="M16.4 26h12.2v3H16.4z"/>
      <path d="M12 38c.8-4.4 3.3-7.3 6.4-9h8.2c3.1 1.7 5.6 4.6 6.4 9z"/>
      <path class="pc-line" d="M20.5 19.5l4.5-6.5" fill="none"/>`,
  q: `<circle cx="9.5" cy="12.5" r="2.3"/><circle cx="16.3" cy="9.3" r="2.3"/><circle cx="22.5" cy="8.2" r="2.3"/>
      <circle cx="28.7" cy="9.3" r="2.3"/><circle cx="35.5" cy="12.5" r="2.3"/>
      <path d="M13 30 9.8 14.4l6 7.4.6-10.4 4 9.6 2.1-10.3 2.1 10.3 4-9.6.6 10.4 6-7.4L32 30z"/>
      <path d="M13 30h19l-1.2 3.5H14.2z"/>
      <path d="M11.5 38.5c0-2.8 1.2-5 3.2-5h15.6c2 0 3.2 2.2 3.2 5z"/>`,
  k: `<path d="M21.4 4h2.2v3.1h3v2.2h-3v3.9h-2.2V9.3h-3V7.1h3z"/>
      <path d="M13 28.5c-5.6-3.7-3.6-12.2 3-12 2.7.1 4.6 2 6.5 4.7 1.9-2.7 3.8-4.6 6.5-4.7 6.6-.2 8.6 8.3 3 12z"/>
      <path d="M22.5 21.2c-1-2.8-.9-5.9 0-7.5.9 1.6 1 4.7 0 7.5z"/>
      <path d="M13 28.5h19l-1.2 4H14.2z"/>
      <path d="M11.5 38.5c0-2.8 1.2-5.5 3.2-5.5h15.6c2 0 3.2 2.7 3.2 5.5z"/>`,
};

/// Adds the piece sprite to the page once.
export function installSprite() {
  if (document.getElementById("tm-sprite")) return;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("id", "tm-sprite");
  svg.setAttribute("aria-hidden", "true");
  svg.style.position = "absolute";
  svg.style.width = "0";
  svg.style.height = "0";
  let defs = "";
  for (const [role, shape] of Object.entries(SHAPES)) {
    for (const [side, cls] of [["w", "pc-w"], ["b", "pc-b"]]) {
      defs += `<g id="pc-${side}${role}" class="pc ${cls}">${shape}</g>`;
    }
  }
  // The shapes are constants of this file, never data from the server.
  svg.innerHTML = `<defs>${defs}</defs>`;
  document.body.prepend(svg);
}

/// Parses the board part of a FEN into a map square → piece letter.
export function parseFen(fen) {
  const placement = String(fen || "").split(" ")[0];
  const pieces = new Map();
  const ranks = placement.split("/");
  if (ranks.length !== 8) return pieces;
  ranks.forEach((row, i) => {
    let file = 0;
    for (const ch of row) {
      if (/[1-8]/.test(ch)) file += Number(ch);
      else if (/[pnbrqkPNBRQK]/.test(ch) && file < 8) {
        pieces.set("abcdefgh"[file] + String(8 - i), ch);
        file += 1;
      }
    }
  });
  return pieces;
}

function squareXY(square, flipped) {
  const file = square.charCodeAt(0) - 97;
  const rank = Number(square[1]) - 1;
  return flipped ? [(7 - file) * SQ, rank * SQ] : [file * SQ, (7 - rank) * SQ];
}

/// True for a light square (file and rank from 0: a1 is dark).
function isLight(file, rank) {
  return (file + rank) % 2 === 1;
}

function node(tag, attrs) {
  const n = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
  return n;
}

/// Creates an empty board element (squares and coordinates drawn once).
export function createBoard({ coordinates = true, flipped = false } = {}) {
  const svg = node("svg", { viewBox: "0 0 360 360", class: "board", role: "img" });
  const squares = node("g", { class: "squares" });
  for (let f = 0; f < 8; f++) {
    for (let r = 0; r < 8; r++) {
      squares.append(node("rect", {
        x: f * SQ, y: (7 - r) * SQ, width: SQ, height: SQ,
        class: isLight(f, r) ? "sq-light" : "sq-dark",
      }));
    }
  }
  svg.append(squares);
  if (coordinates) {
    const coords = node("g", { class: "coords", "aria-hidden": "true" });
    // Each label sits on a square of the bottom row or the left column and takes the other
    // square colour, so it reads on its own square.
    const onSquare = (f, r) => (isLight(f, r) ? "on-light" : "on-dark");
    for (let i = 0; i < 8; i++) {
      const fileIndex = flipped ? 7 - i : i;
      const bottomRank = flipped ? 7 : 0;
      const file = node("text", { x: i * SQ + SQ - 3, y: 357, class: onSquare(fileIndex, bottomRank), "text-anchor": "end" });
      file.textContent = "abcdefgh"[fileIndex];
      const rankIndex = flipped ? i : 7 - i;
      const leftFile = flipped ? 7 : 0;
      const rank = node("text", { x: 2.5, y: i * SQ + 10, class: onSquare(leftFile, rankIndex) });
      rank.textContent = String(rankIndex + 1);
      coords.append(file, rank);
    }
    svg.append(coords);
  }
  svg.append(node("g", { class: "marks" }), node("g", { class: "pieces" }));
  svg.dataset.flipped = flipped ? "1" : "";
  return svg;
}

/// Draws a position: pieces from `fen`, the last move (UCI) highlighted, squares in
/// `warn` outlined (a board that does not match the game).
export function drawPosition(svg, fen, lastMove, warn = []) {
  const flipped = svg.dataset.flipped === "1";
  const marks = svg.querySelector(".marks");
  const layer = svg.querySelector(".pieces");
  marks.replaceChildren();
  layer.replaceChildren();
  const last = typeof lastMove === "string" && /^[a-h][1-8][a-h][1-8]/.test(lastMove)
    ? [lastMove.slice(0, 2), lastMove.slice(2, 4)] : [];
  for (const sq of last) {
    const [x, y] = squareXY(sq, flipped);
    marks.append(node("rect", { x, y, width: SQ, height: SQ, class: "last-move" }));
  }
  for (const sq of warn) {
    if (!/^[a-h][1-8]$/.test(sq)) continue;
    const [x, y] = squareXY(sq, flipped);
    marks.append(node("rect", { x: x + 2, y: y + 2, width: SQ - 4, height: SQ - 4, class: "warn-square" }));
  }
  const pieces = parseFen(fen);
  const fenParts = String(fen || "").split(" ");
  const toMove = fenParts[1] === "b" ? "b" : "w";
  for (const [sq, ch] of pieces) {
    const side = ch === ch.toUpperCase() ? "w" : "b";
    const [x, y] = squareXY(sq, flipped);
    if (ch.toLowerCase() === "k" && side === toMove && /[+#]$/.test(svg.dataset.lastSan || "")) {
      marks.append(node("circle", { cx: x + SQ / 2, cy: y + SQ / 2, r: SQ / 2, class: "in-check" }));
    }
    const use = node("use", { href: `#pc-${side}${ch.toLowerCase()}`, x, y, width: SQ, height: SQ });
    layer.append(use);
  }
  const names = { p: "pawn", n: "knight", b: "bishop", r: "rook", q: "queen", k: "king" };
  svg.setAttribute("aria-label", `Position: ${[...pieces].map(([sq, ch]) =>
    `${ch === ch.toUpperCase() ? "white" : "black"} ${names[ch.toLowerCase()]} ${sq}`).join(", ")}`);
}
