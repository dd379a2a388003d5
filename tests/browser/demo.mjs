// Browser test of `touchmove demo`: Debian's chromium, driven by playwright-core, watches a
// move arrive on the spectator grid, sees the clocks tick, opens a game, downloads its PGN,
// then on the arbiter page sees the recorder's links (web connections), finds the scripted
// Article 7.5.1 alert and sets a result with the token. Screenshots go to target/browser/.
// Exits non-zero on the first failed check.
//
// Usage: node tests/browser/demo.mjs   (TOUCHMOVE_BIN overrides target/release/touchmove)

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bin, check, launchChromium, shots, until } from "./support.mjs";

const work = mkdtempSync(join(tmpdir(), "touchmove-browser-"));
const port = 18000 + Math.floor(Math.random() * 2000);
const base = `http://127.0.0.1:${port}`;
// An event name that would run script if any page inserted tag values as HTML.
const EVIL = `Open <script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">`;

// Start the demo and read the token it prints.
const demo = spawn(bin, ["demo", "--listen", `127.0.0.1:${port}`, "--out", join(work, "out"), "--event", EVIL], {
  stdio: ["ignore", "pipe", "inherit"],
});
let output = "";
demo.stdout.on("data", (chunk) => { output += chunk; });
const demoExit = new Promise((r) => demo.on("exit", (code, signal) => r({ code, signal })));

let browser;
let failed = false;
try {
  const token = await until("the demo's arbiter token", () => (output.match(/Arbiter token: (\S+)/) || [])[1], 20_000);
  browser = await launchChromium({ acceptDownloads: true });
  const page = await browser.newPage();
  page.on("pageerror", (e) => { console.error(`page error: ${e.message}`); failed = true; });

  // Spectator grid: tiles appear, a move arrives, clocks tick.
  await page.goto(`${base}/`);
  await page.waitForSelector(".tile", { timeout: 20_000 });
  await until("the stream to be live", () => page.locator("#status[data-state=live]").count());
  const tiles = await page.locator(".tile").count();
  check(tiles >= 2, `spectator grid shows ${tiles} boards`);
  const before = await page.locator(".tile").first().locator(".last").textContent();
  const after = await until("a move to appear on board 1", async () => {
    const text = await page.locator(".tile").first().locator(".last").textContent();
    return text !== before && /\d+(\.|…) \S+/.test(text) ? text : null;
  });
  check(true, `a move appeared on board 1: "${before}" → "${after}"`);
  const pieces = await page.locator(".tile").first().locator(".pieces use").count();
  check(pieces >= 20 && pieces <= 32, `board 1 draws ${pieces} pieces`);
  check(await page.locator(".tile").first().locator(".last-move").count() === 2, "the last move is highlighted");
  const running = page.locator(".tile .clock.running").first();
  await running.waitFor({ timeout: 10_000 });
  const t0 = await running.textContent();
  await page.waitForTimeout(1600);
  const t1 = await page.locator(".tile .clock.running").first().textContent();
  check(t0 !== t1, `a running clock ticks locally (${t0} → ${t1})`);
  await page.screenshot({ path: join(shots, "spectator.png"), fullPage: true });

  // Game view and PGN download.
  await page.locator(".tile").first().click();
  await page.waitForURL(/\/round\/1\/game\/1$/);
  await until("the move list", () => page.locator("#moves .mv").count());
  check(await page.locator("#white-name").textContent() !== "", "game view shows the players");
  await until("the event tag in the header", async () => (await page.locator("#game-sub").textContent()).includes("<script>"));
  check(await page.evaluate(() => window.__pwned === undefined && !document.querySelector("main img, header img[src=x]")),
    "a <script> tag value is shown as text and never runs");
  await page.screenshot({ path: join(shots, "game.png"), fullPage: true });
  const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#pgn-link").click()]);
  const pgnPath = join(work, "download.pgn");
  await download.saveAs(pgnPath);
  const pgn = readFileSync(pgnPath, "utf8");
  check(/\[White "[^"]+"\]/.test(pgn) && /\[Round "1\.1"\]/.test(pgn) && /1\. \S+ \{\[%clk/.test(pgn), "the downloaded PGN has tags, moves and clocks");

  // Arbiter API is closed without the token.
  const refused = await page.evaluate(async () => (await fetch("/api/arbiter/action", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ board: 1, action: { action: "set_result", result: "1-0", reason: "x" } }),
  })).status);
  check(refused === 401, `the arbiter API refuses a request without the token (${refused})`);

  // Arbiter page: unlock, see the scripted alert, set a result.
  await page.goto(`${base}/arbiter`);
  await page.locator("#token").fill("not-the-token");
  await page.locator("#login-form button[type=submit]").click();
  await until("the wrong token to be refused", async () => (await page.locator("#login-error").textContent()).length > 0);
  check(await page.locator("#desk").isHidden(), "a wrong token does not unlock the arbiter page");
  await page.locator("#token").fill(token);
  await page.locator("#login-form button[type=submit]").click();
  await page.waitForSelector("#desk:not([hidden]) .tile", { timeout: 10_000 });
  const links = await until("the desk's recorder links", async () => {
    const text = await page.locator("#link-parts").textContent();
    return /web: \d+ of \d+ connections open, \d+ refused/.test(text) ? text : null;
  }, 15_000);
  check(true, `the arbiter desk shows the recorder's links (${links})`);
  const alert = page.locator(".decision", { hasText: "7.5.1" }).first();
  await alert.waitFor({ timeout: 120_000 });
  check(/Board 2/.test(await alert.textContent()), "the arbiter page shows the scripted 7.5.1 alert on board 2");
  await page.screenshot({ path: join(shots, "arbiter.png"), fullPage: true });
  await alert.getByRole("button", { name: "Apply penalty" }).click();
  await until("the alert to leave the queue", async () => (await page.locator(".decision", { hasText: "7.5.1" }).count()) === 0);
  check(true, "deciding the penalty clears the alert from the queue");

  await page.locator(".tile[data-board='1']").click();
  await page.locator("#result-reason").fill("White won on time (arbiter test)");
  await page.locator("button[data-result='1-0']").click();
  await until("board 1 to show 1–0", async () =>
    (await page.locator(".tile[data-board='1'] .result").textContent()) === "1–0");
  check(true, "the arbiter's result button set 1–0 on board 1");
  await page.screenshot({ path: join(shots, "arbiter-result.png"), fullPage: true });
  const served = await (await fetch(`${base}/round/1/game/1.pgn`)).text();
  check(/\[Result "1-0"\]/.test(served) && /1-0\s*$/.test(served), "the served PGN carries the arbiter's result");
} catch (e) {
  console.error(e);
  failed = true;
} finally {
  if (browser) await browser.close();
  demo.kill("SIGINT");
  const { code, signal } = await demoExit;
  if (code !== 0) { console.error(`demo exited with ${code ?? signal}`); failed = true; }
  const games = join(work, "out/round-1/games.pgn");
  if (!existsSync(games) || !/\[Result "1-0"\]/.test(readFileSync(games, "utf8"))) {
    console.error("the demo did not leave a complete round-1/games.pgn"); failed = true;
  } else console.log("ok - Ctrl-C left complete PGN files");
}
process.exit(failed ? 1 : 0);
