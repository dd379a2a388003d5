// Browser test of `touchmove demo`: Debian's chromium, driven by playwright-core, watches a
// move arrive on the spectator grid, sees the clocks tick, opens a game (coordinates readable
// on their squares), downloads its PGN, then on the arbiter page (a one-line token field) sees
// the recorder's links (web connections), finds board 2's illegal move as one irregularity
// with one penalty decision, opens it (the board before and after its ply, the moves, the time
// of day, both clocks), checks that spectators see no undecided alert, decides it and sets a
// result with the token. Screenshots go to target/browser/. Exits non-zero on the first
// failed check.
//
// Usage: node tests/browser/demo.mjs   (TOUCHMOVE_BIN overrides target/release/touchmove)

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bin, check, eventually, launchChromium, shots, until } from "./support.mjs";

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
  await eventually(`a move appears on board 1 (was "${before}")`, async () => {
    const text = await page.locator(".tile").first().locator(".last").textContent();
    return text !== before && /\d+(\.|…) \S+/.test(text) ? text : null;
  });
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
  // Every coordinate label reads on its square: its colour is the other square colour.
  const labels = await page.evaluate(() => {
    const luminance = (css) => {
      const [r, g, b] = css.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map((v) => {
        const c = v / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const svg = document.querySelector("#board svg");
    const rects = [...svg.querySelectorAll(".squares rect")];
    return [...svg.querySelectorAll(".coords text")].map((t) => {
      const box = t.getBBox();
      const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
      const square = rects.find((r) => {
        const [x, y, w] = ["x", "y", "width"].map((k) => Number(r.getAttribute(k)));
        return cx >= x && cx < x + w && cy >= y && cy < y + w;
      });
      const [a, b] = [luminance(getComputedStyle(t).fill), luminance(getComputedStyle(square).fill)];
      return { label: t.textContent, contrast: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
    });
  });
  check(labels.length === 16, `the game board has 16 coordinate labels (${labels.map((l) => l.label).join("")})`);
  const faint = labels.filter((l) => l.contrast < 2);
  check(faint.length === 0, `every coordinate label contrasts with its square (lowest ${Math.min(...labels.map((l) => l.contrast)).toFixed(2)}:1${faint.length ? `; faint: ${faint.map((l) => l.label).join(" ")}` : ""})`);
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
  await page.locator("#token").waitFor();
  const field = await page.locator("#token").boundingBox();
  const fontPx = await page.locator("#token").evaluate((e) => parseFloat(getComputedStyle(e).fontSize));
  check(field.height < fontPx * 3, `the token field is one line high (${field.height} px for ${fontPx} px text)`);
  await page.screenshot({ path: join(shots, "arbiter-login.png"), fullPage: true });
  await page.locator("#token").fill("not-the-token");
  await page.locator("#login-form button[type=submit]").click();
  await until("the wrong token to be refused", async () => (await page.locator("#login-error").textContent()).length > 0);
  check(await page.locator("#desk").isHidden(), "a wrong token does not unlock the arbiter page");
  await page.locator("#token").fill(token);
  await page.locator("#login-form button[type=submit]").click();
  await page.waitForSelector("#desk:not([hidden]) .tile", { timeout: 10_000 });
  await eventually("the arbiter desk shows the recorder's links (web connections open and refused)", async () => {
    const text = await page.locator("#link-parts").textContent();
    return /web: \d+ of \d+ connections open, \d+ refused/.test(text) ? text : null;
  }, 15_000);
  const alert = page.locator("#queue .decision", { hasText: "7.5.1" }).first();
  await alert.waitFor({ timeout: 120_000 });
  check(/Board 2/.test(await alert.textContent()), "the arbiter page shows the scripted 7.5.1 alert on board 2");
  await until("the 7.5.5 proposal to join its irregularity", async () => /7\.5\.5/.test(await alert.textContent()));
  const ply = Number(await alert.getAttribute("data-ply"));
  const sameIrregularity = page.locator(`#queue .decision[data-board="2"][data-ply="${ply}"]`);
  check(await sameIrregularity.count() === 1, `the illegal move at ply ${ply} is one card, 7.5.1 and its 7.5.5 proposal together`);
  check(await sameIrregularity.locator("button", { hasText: "Apply penalty" }).count() === 1,
    "one irregularity offers one penalty");
  const follows = await alert.locator(".follows").textContent();
  check(/adds \d+ minutes? to (White|Black)'s clock/.test(follows) && /second one would lose/.test(follows),
    `the card says what follows: "${follows}"`);
  await page.screenshot({ path: join(shots, "arbiter.png"), fullPage: true });

  // Spectators see no undecided alert: not on the grid, not in the game page, not in the JSON.
  const spectator = await browser.newPage();
  await spectator.goto(`${base}/`);
  await spectator.waitForSelector(".tile[data-board='2']", { timeout: 20_000 });
  await spectator.waitForTimeout(1000);
  const badges = await spectator.locator(".tile .badge:visible").allTextContents();
  check(!badges.some((b) => /alert/i.test(b)), `the spectator grid shows no alert badge (${JSON.stringify(badges)})`);
  const leaks = await spectator.evaluate(async () => {
    const alerts = (await fetch("/api/round/1/alerts")).status;
    const game = await (await fetch("/api/round/1/game/2")).text();
    const round = await (await fetch("/api/round/1")).text();
    return { alerts, game: /7\.5\.1|alerts/.test(game), round: /open_alerts|7\.5\.1/.test(round) };
  });
  check(leaks.alerts === 401 && !leaks.game && !leaks.round,
    `the public API has no undecided alert (alerts endpoint ${leaks.alerts}, game JSON ${leaks.game ? "leaks" : "clean"}, round JSON ${leaks.round ? "leaks" : "clean"})`);
  await spectator.goto(`${base}/round/1/game/2`);
  await until("board 2's moves", () => spectator.locator("#moves .mv").count());
  check(!/7\.5\.1|alert/i.test(await spectator.locator("body").textContent()), "board 2's game page shows no undecided alert");
  await spectator.close();

  // Looking at the alert: the board before and after its ply, the moves, time of day, clocks.
  await alert.getByRole("button", { name: "Look" }).click();
  const inspector = page.locator("#inspector[open]");
  await inspector.waitFor({ timeout: 5000 });
  await until("the inspector's boards", () => inspector.locator(".inspector-after .pieces use").count());
  const game2 = await page.evaluate(async () => (await fetch("/api/round/1/game/2")).json());
  const beforeFen = ply > 1 ? game2.moves[ply - 2].fen : game2.start_fen;
  const pieceCount = beforeFen.split(" ")[0].replace(/[^a-zA-Z]/g, "").length;
  check(await inspector.locator(".inspector-before .pieces use").count() === pieceCount,
    `the board before ply ${ply} has the ${pieceCount} pieces of that position`);
  check(/ply \d+/i.test(await inspector.locator(".inspector-after-caption").textContent()), `the board after the ply is shown (${await inspector.locator(".inspector-after-caption").textContent()})`);
  const current = await inspector.locator(".inspector-moves .current").allTextContents();
  check(await inspector.locator(".inspector-moves .mv:not(.empty)").count() >= ply - 1 && current.length === 1,
    `the moves are listed with ply ${ply} marked (${current[0]})`);
  const when = await inspector.locator(".inspector-when").textContent();
  check(/\d{1,2}:\d{2}:\d{2}/.test(when) && !/recorder started/.test(when), `the time of day is shown (${when})`);
  const clocksThen = await inspector.locator(".inspector-clocks").textContent();
  check(/White \d+:\d{2}/.test(clocksThen) && /Black \d+:\d{2}/.test(clocksThen), `both clocks are shown (${clocksThen})`);
  await page.screenshot({ path: join(shots, "arbiter-alert.png"), fullPage: true });
  await inspector.getByRole("button", { name: "Apply penalty" }).click();
  await eventually("deciding the penalty clears the irregularity from the queue",
    async () => (await page.locator("#queue .decision", { hasText: "7.5.1" }).count()) === 0);
  const served2 = await (await fetch(`${base}/round/1/game/2.pgn`)).text();
  check(/\{7\.5\.1: Black|\{7\.5\.1: White/.test(served2) && !/(\d\.\d(?:\.\d)*): \1:/.test(served2),
    "board 2's PGN notes the illegal move under its article once");

  // The first answer is lost (the node gave up waiting after the recorder applied it): the
  // desk asks again with the same key, and the recorder answers that it applied it already.
  const sent = [];
  await page.route("**/api/arbiter/action", async (route) => {
    sent.push(JSON.parse(route.request().postData() || "{}").key);
    if (sent.length === 1) {
      await route.fetch();
      await route.fulfill({ status: 504, contentType: "application/json", body: JSON.stringify({ error: "the recorder did not answer in time" }) });
    } else await route.continue();
  });
  await page.locator(".tile[data-board='1']").click();
  await page.locator("#result-reason").fill("White won on time (arbiter test)");
  await page.locator("button[data-result='1-0']").click();
  await until("the desk to ask again", async () => /already applied/.test(await page.locator("#log").textContent()), 15_000);
  check(sent.length === 2 && /^[0-9a-f]{32}$/.test(sent[0]) && sent[0] === sent[1],
    `an action whose answer was lost is sent again with its key (${JSON.stringify(sent)})`);
  await page.unroute("**/api/arbiter/action");
  await eventually("the arbiter's result button set 1–0 on board 1", async () =>
    (await page.locator(".tile[data-board='1'] .result").textContent()) === "1–0");
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
