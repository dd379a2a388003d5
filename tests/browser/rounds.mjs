// Browser test of rounds that follow: `touchmove record` on two virtual boards with round 1
// of a FIDE TRF; the spectator grid, a game view and the arbiter desk are open; the pairing
// program writes round 2 into the TRF and the arbiter presses "next round" on the desk. Every
// open page must move to round 2 by itself, with round 2's players, while round 1 stays
// browsable (pages and files). Screenshots go to target/browser/. Exits non-zero on the first
// failed check.
//
// Usage: node tests/browser/rounds.mjs   (TOUCHMOVE_BIN overrides target/release/touchmove)

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bin, check, eventually, launchChromium, root, shots, until } from "./support.mjs";

const work = mkdtempSync(join(tmpdir(), "touchmove-rounds-"));
const port = 20000 + Math.floor(Math.random() * 2000);
const base = `http://127.0.0.1:${port}`;
const out = join(work, "out");

// A TRF player line: rank, name, rating, then one block per round ("opp c r").
function player(rank, name, rating, blocks) {
  const head = `001 ${String(rank).padStart(4)}      ${name.padEnd(33)} ${String(rating).padStart(4)} NOR ${String(1000 + rank).padStart(11)} 1990/00/00  0.0 ${String(rank).padStart(4)}`;
  return (head + blocks.map((b) => `  ${b}`).join("")).trimEnd();
}
const names = ["Alpha, Anna", "Beta, Bo", "Gamma, Gro", "Delta, Dag"];
// Round 1: Alpha–Gamma on board 1, Beta–Delta on board 2.
const round1 = [
  player(1, names[0], 2400, ["   3 w  "]),
  player(2, names[1], 2300, ["   4 w  "]),
  player(3, names[2], 2200, ["   1 b  "]),
  player(4, names[3], 2100, ["   2 b  "]),
];
// After round 1 (1–0, ½–½) the pairing program pairs round 2: Beta–Alpha, Gamma–Delta.
const round2 = [
  player(1, names[0], 2400, ["   3 w 1", "   2 b  "]),
  player(2, names[1], 2300, ["   4 w =", "   1 w  "]),
  player(3, names[2], 2200, ["   1 b 0", "   4 w  "]),
  player(4, names[3], 2100, ["   2 b =", "   3 b  "]),
];
const trf = join(work, "event.trf");
const writeTrf = (lines) => writeFileSync(trf, ["012 Rounds test", ...lines, "XXR 5", ""].join("\n"));
writeTrf(round1);

const children = [];
function run(args, name) {
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  child.stdout.on("data", (c) => { text += c; });
  child.stderr.on("data", (c) => { text += c; });
  const exit = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
  children.push({ child, exit, name, log: () => text });
  return children[children.length - 1];
}

let browser;
let failed = false;
try {
  const pgn = join(root, "fixtures/recorder-games.pgn");
  for (const k of [1, 2]) {
    run(["sim", "--pgn", pgn, "--game", String(k), "--speed", "4", "--port", join(work, `board-${k}`)], `sim ${k}`);
  }
  await until("the virtual boards", () => existsSync(join(work, "board-1")) && existsSync(join(work, "board-2")), 20_000);
  const recorder = run([
    "record", "--port", join(work, "board-1"), "--port", join(work, "board-2"),
    "--pairings", trf, "--round", "1", "--listen", `127.0.0.1:${port}`, "--out", out,
  ], "record");
  const token = await until("the arbiter token", () => {
    try { return readFileSync(`${out}.state/arbiter.token`, "utf8").trim(); } catch { return null; }
  }, 20_000);

  browser = await launchChromium();
  const open = async (path) => {
    const page = await browser.newPage();
    page.on("pageerror", (e) => { console.error(`page error (${path}): ${e.message}`); failed = true; });
    await page.goto(`${base}${path}`);
    return page;
  };
  const whiteOf = (page, board) => page.locator(`.tile[data-board='${board}'] .player.white .name`).textContent();

  // Round 1 on every page.
  const grid = await open("/");
  await until("round 1's tiles", async () => (await grid.locator(".tile").count()) === 2);
  await until("round 1's players", async () => (await whiteOf(grid, 1)) === names[0]);
  check((await grid.locator("#round-label").textContent()) === "Round 1", "the grid shows round 1 with its pairings");
  const game = await open("/round/1/game/1");
  await eventually("the game view shows board 1 of round 1",
    async () => (await game.locator("#white-name").textContent()) === names[0]);
  const desk = await open("/arbiter");
  await desk.locator("#token").fill(token);
  await desk.locator("#login-form button[type=submit]").click();
  await desk.waitForSelector("#desk:not([hidden]) .tile", { timeout: 10_000 });
  check((await desk.locator("#round-label").textContent()) === "Round 1", "the arbiter desk shows round 1");
  await until("a move on board 1", async () => /\S/.test(await grid.locator(".tile[data-board='1'] .last").textContent()), 60_000);
  await grid.screenshot({ path: join(shots, "rounds-1.png"), fullPage: true });

  // The pairing program writes round 2; the arbiter starts it from the desk.
  writeTrf(round2);
  desk.once("dialog", (d) => d.accept());
  await desk.locator("#next-round").click();
  await eventually("the desk's next round was accepted",
    async () => /round 2 starts/.test(await desk.locator("#log").textContent()), 30_000);

  await until("the grid to move to round 2", async () => grid.url().endsWith("/round/2")
    && (await grid.locator("#round-label").textContent()) === "Round 2", 30_000);
  await eventually("the grid moved to round 2 by itself, with round 2's pairings", async () => (await grid.locator(".tile").count()) === 2
    && (await whiteOf(grid, 1)) === names[1] && (await whiteOf(grid, 2)) === names[2]);
  await until("the desk to move to round 2", async () =>
    (await desk.locator("#round-label").textContent()) === "Round 2"
    && (await desk.locator("#desk").isVisible()), 30_000);
  await eventually("the arbiter desk moved to round 2 by itself and is still unlocked",
    async () => (await whiteOf(desk, 1)) === names[1] && (await desk.locator("#desk").isVisible()));
  check(/round 2 starts/.test(await desk.locator("#log").textContent()),
    "the desk's log still says round 2 started after the page moved");
  const again = await fetch(`${base}/api/arbiter/next-round`, {
    method: "POST", headers: { Authorization: `Bearer ${token}` }, body: JSON.stringify({ round: 1 }),
  });
  const current = await (await fetch(`${base}/api/current`)).json();
  check(again.status === 409 && current.round === 2,
    `"next round" sent again for round 1 is refused and starts nothing (${again.status}, round ${current.round})`);
  await eventually("the game view moved to board 1 of round 2", async () => game.url().endsWith("/round/2/game/1")
    && (await game.locator("#white-name").textContent()) === names[1], 30_000);
  await grid.screenshot({ path: join(shots, "rounds-2.png"), fullPage: true });
  await desk.screenshot({ path: join(shots, "rounds-2-arbiter.png"), fullPage: true });

  // Round 1 stays browsable, and a page showing it stays there.
  await grid.goto(`${base}/round/1`);
  await until("round 1's tiles again", async () => (await grid.locator(".tile").count()) === 2
    && (await whiteOf(grid, 1)) === names[0]);
  check(await grid.locator("#rounds a", { hasText: "Round 2" }).count() === 1, "the grid links both rounds");
  await grid.waitForTimeout(4500);
  check(grid.url().endsWith("/round/1"), "a page browsing round 1 stays on round 1");
  const served = await (await fetch(`${base}/round/1/game/1.pgn`)).text();
  check(/\[White "Alpha, Anna"\]/.test(served) && /\[Round "1\.1"\]/.test(served), "round 1's PGN is still served");
  const kept = readFileSync(join(out, "round-1/game-1.pgn"), "utf8");
  check(/\[Round "1\.1"\]/.test(kept) && /1\. \S+/.test(kept), "round-1/game-1.pgn is kept with its moves");
  check(existsSync(join(out, "round-2/game-1.pgn")), "round-2/game-1.pgn is written");
  check(/recording/.test(recorder.log()) && /round 2:/.test(recorder.log()), "the recorder said it records round 2");
} catch (e) {
  console.error(e);
  for (const c of children) console.error(`--- ${c.name}:\n${c.log()}`);
  failed = true;
} finally {
  if (browser) await browser.close();
  for (const c of children.reverse()) {
    c.child.kill("SIGINT");
    await c.exit;
  }
}
process.exit(failed ? 1 : 0);
