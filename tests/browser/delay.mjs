// Browser test of a broadcast with a transmission delay: `touchmove record --broadcast-delay
// 6s` on a virtual board; the spectators' game page and the arbiter desk are open. The
// arbiter's API is sampled every 100 ms (moves and both clocks, worked out to that instant);
// the page must show, at every moment, what the arbiter had 6 s before: never a move early,
// and each clock as it stood then, counting down from the delayed move — not the delayed
// reading run down by the wall clock, which would show the delay less (DGT's viewer does
// that with [ReferenceTime]). The desk, meanwhile, is ahead of the page: it is live. The
// status badge says the page is delayed. Screenshots go to target/browser/.
//
// Usage: node tests/browser/delay.mjs   (TOUCHMOVE_BIN overrides target/release/touchmove)

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bin, check, eventually, launchChromium, root, shots, until } from "./support.mjs";

const DELAY_MS = 6000;
/// The delay counts from when a move was made on the board; the arbiter's API shows it once
/// the recorder has read it, on a loaded 2-core machine up to a few hundred ms later. A page
/// is caught early only when it shows a move sooner than this before the delay is up.
const READ_MS = 500;
const work = mkdtempSync(join(tmpdir(), "touchmove-delay-"));
const port = 22000 + Math.floor(Math.random() * 2000);
const base = `http://127.0.0.1:${port}`;
const out = join(work, "out");

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

/// Fails the test with `message` unless `condition` holds (quietly: it is asked often).
function must(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/// Milliseconds from a clock as the page shows it: h:mm:ss, m:ss or 0:0s.t.
function shownMs(text) {
  const m = String(text).trim().match(/^(?:(\d+):)?(\d+):(\d+)(?:\.(\d))?$/);
  if (!m) return null;
  const [, h, mm, ss, tenths] = m;
  return ((Number(h || 0) * 60 + Number(mm)) * 60 + Number(ss)) * 1000 + Number(tenths || 0) * 100;
}

let browser;
let failed = false;
try {
  const pgn = join(root, "fixtures/recorder-games.pgn");
  run(["sim", "--pgn", pgn, "--game", "2", "--speed", "1", "--port", join(work, "board-1")], "sim");
  await until("the virtual board", () => existsSync(join(work, "board-1")), 20_000);
  const recorder = run([
    "record", "--port", join(work, "board-1"), "--time-control", "300+5", "--broadcast-delay", "6s",
    "--listen", `127.0.0.1:${port}`, "--out", out,
  ], "record");
  const token = await until("the arbiter token", () => {
    try { return readFileSync(`${out}.state/arbiter.token`, "utf8").trim(); } catch { return null; }
  }, 20_000);
  const auth = { Authorization: `Bearer ${token}` };

  // The arbiter's view, sampled: when, the plies, each clock worked out to that instant.
  const live = [];
  let sampling = true;
  const sample = async () => {
    while (sampling) {
      const start = Date.now();
      try {
        const g = await (await fetch(`${base}/api/arbiter/round/1/game/1`, { headers: auth })).json();
        const at = Date.now();
        const c = g.clock;
        const left = (side) => {
          if (!c) return null;
          const ms = side === "white" ? c.white_ms : c.black_ms;
          return c.running === side ? ms - c.age_ms : ms;
        };
        live.push({ start, at, ply: g.ply, white: left("white"), black: left("black") });
      } catch { /* the server is starting */ }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const sampler = sample();
  /// The arbiter's sample nearest `at` (within 150 ms), if any.
  const liveAt = (at) => {
    let best = null;
    for (const s of live) if (!best || Math.abs(s.at - at) < Math.abs(best.at - at)) best = s;
    return best && Math.abs(best.at - at) <= 150 ? best : null;
  };

  browser = await launchChromium();
  const page = await browser.newPage();
  page.on("pageerror", (e) => { console.error(`page error: ${e.message}`); failed = true; });
  await page.goto(`${base}/round/1/game/1`);
  const desk = await browser.newPage();
  desk.on("pageerror", (e) => { console.error(`desk error: ${e.message}`); failed = true; });
  await desk.goto(`${base}/arbiter`);
  await desk.locator("#token").fill(token);
  await desk.locator("#login-form button[type=submit]").click();
  await desk.waitForSelector("#desk:not([hidden]) .tile", { timeout: 10_000 });

  await until("six moves live", () => live.length && live[live.length - 1].ply >= 6, 90_000);
  await eventually("the spectators' page says it is delayed",
    async () => /Delayed 6 s/.test(await page.locator("#status").textContent()));
  await eventually("the desk says the public sees round 1 6 s late",
    async () => /6 s late/.test(await desk.locator("#delay-now").textContent()));

  // Watch the page for a while: each look compared with the arbiter's view the delay before.
  let looks = 0;
  let clocksCompared = 0;
  let deskAhead = 0;
  const until_ = Date.now() + 20_000;
  while (Date.now() < until_) {
    const at = Date.now();
    const plies = await page.locator("#moves .mv:not(.empty)").count();
    const white = shownMs(await page.locator("#white-clock").textContent());
    const black = shownMs(await page.locator("#black-clock").textContent());
    const after = Date.now();
    const then = liveAt(at - DELAY_MS);
    const thenAfter = liveAt(after - DELAY_MS);
    if (then && thenAfter && then.ply === thenAfter.ply) {
      looks += 1;
      // A sample asked for after the look's delayed moment that still lacks a ply the page
      // shows proves the page early (the ply reached the arbiter after the sample was asked).
      const early = live.find((s) => s.start >= after - DELAY_MS + READ_MS && s.ply < plies);
      if (early) {
        must(false, `the page shows ${plies} plies at ${new Date(after).toISOString()}, the arbiter had ${early.ply} at ${new Date(early.start).toISOString()}, less than ${DELAY_MS - READ_MS} ms before: nothing early`);
      }
      const lastPly = live.filter((s) => s.at <= at - DELAY_MS - 1000).pop();
      if (plies === then.ply && lastPly && lastPly.ply === then.ply && then.white !== null && white !== null) {
        // Whole seconds on the page; the sample and the look are a few ms apart.
        const off = Math.max(Math.abs(white - then.white), Math.abs(black - then.black));
        must(off <= 1300,
          `the page's clocks ${white}/${black} ms are the arbiter's of ${DELAY_MS} ms before, ${then.white}/${then.black} (off by ${off} ms)`);
        clocksCompared += 1;
      }
    }
    const deskLast = await desk.locator(".tile[data-board='1'] .last").textContent();
    const nowLive = live[live.length - 1];
    if (nowLive && new RegExp(`^${Math.ceil(nowLive.ply / 2)}\\.`).test(deskLast) && nowLive.ply > plies) deskAhead += 1;
    await page.waitForTimeout(400);
  }
  check(looks >= 20, `the page was compared with the arbiter's view ${looks} times`);
  check(clocksCompared >= 5, `its running clocks were compared ${clocksCompared} times`);
  check(deskAhead >= 3, `the desk showed the live move while the page was behind (${deskAhead} times)`);
  await page.screenshot({ path: join(shots, "delay-game.png"), fullPage: true });
  await desk.screenshot({ path: join(shots, "delay-arbiter.png"), fullPage: true });
  sampling = false;
  await sampler;
  check(/broadcast|delay|recording/.test(recorder.log()), "the recorder ran");
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
