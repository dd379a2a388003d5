// touchmove: helpers shared by the pages — safe element building, clocks, the live stream.

/// Builds an element. Children that are strings become text nodes, so data from PGN tags
/// or the recorder is always shown as text, never parsed as HTML.
export function el(tag, attrs = {}, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") n.className = v;
    else if (k === "text") n.textContent = v;
    else if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else n.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    n.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return n;
}

/// Formats milliseconds as a chess clock does: h:mm:ss, m:ss, and tenths under 10 s.
export function formatClock(ms) {
  const t = Math.max(0, ms);
  if (t < 10_000) return `0:0${Math.floor(t / 1000)}.${Math.floor((t % 1000) / 100)}`;
  const s = Math.floor(t / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/// A clock reading that keeps ticking locally between updates from the server.
export class ClockPair {
  constructor() { this.set(null); }
  /// `clock` is the server's {white_ms, black_ms, running, age_ms} (or null).
  set(clock, result) {
    this.clock = clock;
    this.stopped = Boolean(result);
    this.base = performance.now() - (clock ? clock.age_ms || 0 : 0);
  }
  /// Remaining time of `side` now.
  remaining(side) {
    if (!this.clock) return null;
    const ms = side === "white" ? this.clock.white_ms : this.clock.black_ms;
    if (this.stopped || this.clock.running !== side) return ms;
    return ms - (performance.now() - this.base);
  }
  running(side) { return !this.stopped && this.clock && this.clock.running === side; }
}

/// Shows a clock pair in two elements; returns nothing (call it on every tick).
export function paintClock(elem, pair, side) {
  const ms = pair.remaining(side);
  const text = ms === null ? "–:––" : formatClock(ms);
  if (elem.textContent !== text) elem.textContent = text;
  elem.classList.toggle("running", Boolean(pair.running(side)));
  elem.classList.toggle("low", ms !== null && ms < 60_000);
}

const RESULT_TEXT = { "1-0": "1–0", "0-1": "0–1", "1/2-1/2": "½–½" };

/// The result as people write it.
export function resultText(result) { return RESULT_TEXT[result] || result || ""; }

/// "24. Nf3" or "23… Qd7" for a ply and its SAN.
export function moveLabel(ply, san) {
  if (!ply || !san) return "";
  const n = Math.ceil(ply / 2);
  return ply % 2 === 1 ? `${n}. ${san}` : `${n}… ${san}`;
}

/// A status badge's setter (nothing without a badge).
function badge(statusEl) {
  return (state, text) => {
    if (!statusEl) return;
    statusEl.dataset.state = state;
    statusEl.textContent = text;
  };
}

/// "15 min", "90 s", "1 h 30 min" for a delay in milliseconds.
export function delayText(ms) {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return [h && `${h} h`, m && `${m} min`, sec && `${sec} s`].filter(Boolean).join(" ") || "none";
}

/// Opens an SSE stream with a status badge; `handlers` maps event names to functions of the
/// parsed data. EventSource resends Last-Event-ID by itself when it reconnects. A round
/// broadcast with a delay says so on the badge (`/api/current`).
export function connect(url, handlers, statusEl) {
  const source = new EventSource(url);
  const status = badge(statusEl);
  status("connecting", "Connecting…");
  source.onopen = async () => {
    let delay = 0;
    try { delay = (await (await fetch("/api/current")).json()).delay_ms || 0; } catch { delay = 0; }
    status("live", delay ? `Delayed ${delayText(delay)}` : "Live");
  };
  source.onerror = () => status("offline", "Reconnecting…");
  for (const [name, fn] of Object.entries(handlers)) {
    source.addEventListener(name, (e) => {
      let data;
      try { data = JSON.parse(e.data); } catch { return; }
      fn(data, e.lastEventId);
    });
  }
  return source;
}

/// Like `connect`, with `headers` on the request (the arbiter's token, which EventSource
/// cannot send): reads the stream with fetch, and comes back after 2 s with the last event id
/// it had when the connection drops.
export function connectWith(url, headers, handlers, statusEl) {
  const status = badge(statusEl);
  let lastId = null;
  const dispatch = (frame) => {
    let name = "message";
    const data = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
      else if (field === "id") lastId = value;
    }
    const fn = handlers[name];
    if (!fn || data.length === 0) return;
    let parsed;
    try { parsed = JSON.parse(data.join("\n")); } catch { return; }
    fn(parsed, lastId);
  };
  const run = async () => {
    for (;;) {
      status("connecting", "Connecting…");
      try {
        const sent = { ...headers, Accept: "text/event-stream" };
        if (lastId !== null) sent["Last-Event-ID"] = lastId;
        const response = await fetch(url, { headers: sent, cache: "no-store" });
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        status("live", "Live");
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            dispatch(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          }
        }
      } catch { /* the connection dropped: come back */ }
      status("offline", "Reconnecting…");
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  };
  run();
}

/// Round number from a path like /round/3 or /round/3/game/2 (null if none).
export function pathNumbers() {
  const m = location.pathname.match(/^\/round\/(\d+)(?:\/game\/(\d+))?/);
  return m ? { round: Number(m[1]), board: m[2] ? Number(m[2]) : null } : { round: null, board: null };
}

/// The event name from the games' tags, if any.
export function eventName(tags) {
  const tag = (tags || []).find(([k]) => k === "Event");
  return tag && tag[1] && tag[1] !== "?" ? tag[1] : null;
}

/// Starts one timer that repaints every ticking clock on the page.
export function tick(fn) {
  fn();
  return setInterval(fn, 100);
}

/// The round being recorded (`/api/current`: as the public sees it), or null when the server
/// does not say.
export async function currentRound() {
  try { return (await (await fetch("/api/current")).json()).round ?? null; } catch { return null; }
}

/// Follows the event from round to round: every `everyMs` asks which round is being recorded
/// and, when a new round starts while this page shows the round that was being recorded, calls
/// `move(newRound)`. A page showing an earlier round (browsed on purpose) stays where it is.
/// Errors (the recorder restarting for the next round) are ignored until it answers again.
/// `ask` gives the round being recorded (default: as the public sees it).
export function followRounds(shown, move, everyMs = 2000, ask = currentRound) {
  let recorded = null;
  let moving = false;
  const check = async () => {
    const now = await ask();
    if (now === null || moving) return;
    if (recorded === null) recorded = now;
    if (now !== recorded) {
      const following = shown === recorded;
      recorded = now;
      if (following && now !== shown) { moving = true; move(now); }
    }
  };
  check();
  return setInterval(check, everyMs);
}
