// Helpers shared by the browser tests: where the binary and the screenshots are, checks that
// print what held, waiting for a condition, and Debian's chromium with a fresh profile.

import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

/** The repository. */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** The touchmove binary under test (TOUCHMOVE_BIN overrides target/release/touchmove). */
export const bin = process.env.TOUCHMOVE_BIN || join(root, "target/release/touchmove");
/** Where the screenshots go. */
export const shots = join(root, "target/browser");
mkdirSync(shots, { recursive: true });

/** Throws when `condition` does not hold; prints `ok - message` when it does. */
export function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
  console.log(`ok - ${message}`);
}

/** A check on something that takes time: polls `fn` like `until` and prints `ok - message`
 * when it holds (its value is returned); fails the test when it has not held in time. */
export async function eventually(message, fn, timeoutMs = 30_000) {
  const value = await until(message, fn, timeoutMs).catch(() => {
    throw new Error(`check failed: ${message} (not within ${timeoutMs / 1000} s)`);
  });
  check(value, message);
  return value;
}

/** Polls `fn` every 200 ms until it returns something truthy (returned), or throws. */
export async function until(what, fn, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Headless chromium (CHROMIUM overrides /usr/bin/chromium) with a fresh profile directory
 * each run (playwright passes it as --user-data-dir); `options` add to the context's. */
export function launchChromium(options = {}) {
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "touchmove-chromium-")), {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
    viewport: { width: 1400, height: 900 },
    ...options,
  });
}
