//! What a board sends after its link came back, before the host has read it again.
//!
//! A board whose link was down may have been played on meanwhile, and its field updates of
//! that time are lost. When the link comes back, a board that kept its update mode (a
//! Bluetooth board that stayed powered) sends the next changes at once, before the host's
//! handshake is even answered; a board that kept nothing sends them once the host sets its
//! update mode again. Either way those changes come after moves nobody saw: applied to the
//! host's picture from before the gap, they would be read as live moves played before the
//! gap's moves. [`Resumption`] sorts the messages: what arrives after a reconnect is part of
//! the gap until the board has been read again (its move log, or failing that its board
//! dump), and only then is the line live.
//!
//! The host's link knows when its connection was lost, and says so ([`Resumption::link_lost`]):
//! everything after that is on a new connection, however late the handshake's answer
//! comes. A stream without those marks (a capture of another program) has only the bytes:
//! there the handshake (the board's version reply) marks a reconnect. What arrived just
//! before it, after a silence no live link has (the link's watchdog probes a board silent
//! for a second), belongs to the new connection too: it is held back for a moment until the
//! handshake shows whether it does. A board dump or a move log is an answer to the host,
//! and on a new connection the version reply is the first answer: one that comes first
//! belongs to the connection that was, and ends the wait.

use super::Millis;
use crate::wire::dgt::Message;

/// A silence this long means the link was down (a live link hears the board at least every
/// second or so: field updates, clock readings, or the answers to the watchdog's probes).
pub const LINK_DOWN_SILENCE_MS: Millis = 1_500;

/// How long after the first message following such a silence the handshake's version reply
/// may come: the link asks for it as soon as the port is open, and what the board sent
/// before it is read from the port with it. Held longer, a silence with no reconnect behind
/// it would hold up the game's time.
pub const HANDSHAKE_WINDOW_MS: Millis = 400;

/// One message, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resumed {
    /// The link came back at `t_ms` (the first message of the new connection): whatever the
    /// board's next picture shows may have been played unseen.
    LinkBack {
        /// When the new connection's first message arrived.
        t_ms: Millis,
    },
    /// A message read as it comes.
    Live(Millis, Message),
    /// A message received after the link came back and before the board was read again:
    /// part of the gap. Its changes are told by the board's log or picture, not by it.
    InGap(Millis, Message),
}

/// Sorts a board's messages around reconnects (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Resumption {
    /// When the board was last heard.
    last_heard: Option<Millis>,
    /// The board was heard after a silence, and no message has come since.
    after_silence: bool,
    /// Messages held back after a silence, with when the first of them came.
    held: Option<(Millis, Vec<(Millis, Message)>)>,
    /// The link came back and the board has not been read again yet.
    awaiting_read: bool,
    /// The last message that ended a wait for the board to be read again was its log.
    read_by_log: bool,
    /// The host's link lost its connection: the next message is the new connection's.
    link_lost: bool,
    /// The current connection's start was marked by the link, so its handshake is no
    /// second reconnect.
    marked_by_link: bool,
}

impl Resumption {
    /// Nothing heard yet.
    pub fn new() -> Resumption {
        Resumption::default()
    }

    /// True while messages are held back after a silence (the caller lets no time pass for
    /// the game meanwhile: what they tell comes first).
    pub fn holding(&self) -> bool {
        self.held.is_some()
    }

    /// True after a reconnect until the board has been read again.
    pub fn awaiting_read(&self) -> bool {
        self.awaiting_read
    }

    /// The board's log, just read, told nothing the host could use (refused, or not read at
    /// all): the line stays in the gap until the board's dump.
    pub fn log_not_used(&mut self) {
        if std::mem::take(&mut self.read_by_log) {
            self.awaiting_read = true;
        }
    }

    /// The host's link lost its connection to the board (or the host restarted): whatever
    /// comes next is on a new connection, part of the gap until the board is read again.
    pub fn link_lost(&mut self) {
        self.link_lost = true;
    }

    /// True from the moment the host's link lost its connection until the board's first
    /// message on a new one: the board is not being read.
    pub fn link_down(&self) -> bool {
        self.link_lost
    }

    /// Sorts message `m` received at `t_ms`; `playing` is true once a game began (before, a
    /// handshake is no reconnect). What can be told is appended to `out`.
    pub fn push(&mut self, t_ms: Millis, m: Message, playing: bool, out: &mut Vec<Resumed>) {
        self.heard(t_ms);
        let silent_before = std::mem::take(&mut self.after_silence);
        if let Some((since, _)) = &self.held
            && t_ms > since + HANDSHAKE_WINDOW_MS
        {
            self.release(out);
        }
        let handshake = matches!(m, Message::Version { .. });
        if std::mem::take(&mut self.link_lost) && playing {
            // What was held came on the connection that was.
            self.release(out);
            out.push(Resumed::LinkBack { t_ms });
            self.awaiting_read = true;
            self.marked_by_link = true;
        }
        if handshake && std::mem::take(&mut self.marked_by_link) {
            out.push(Resumed::Live(t_ms, m));
            return;
        }
        if handshake && playing {
            let since = self.held.as_ref().map_or(t_ms, |(since, _)| *since);
            out.push(Resumed::LinkBack { t_ms: since });
            self.awaiting_read = true;
            for (t, held) in self.held.take().map(|(_, h)| h).unwrap_or_default() {
                out.push(Resumed::InGap(t, held));
            }
            out.push(Resumed::Live(t_ms, m));
            return;
        }
        if matches!(m, Message::BoardDump(_) | Message::EepromMoves(_)) {
            // Answers to the host: on a new connection its version reply comes first, so
            // these, and whatever was held before them, belong to the connection that was.
            self.release(out);
            self.sort(t_ms, m, out);
            return;
        }
        if let Some((_, held)) = &mut self.held {
            held.push((t_ms, m));
            return;
        }
        if silent_before && playing && !self.awaiting_read {
            self.held = Some((t_ms, vec![(t_ms, m)]));
            return;
        }
        self.sort(t_ms, m, out);
    }

    /// Bytes arrived at `t_ms` (a message's first ones, say): a silence ends there, even if
    /// the message they begin is complete only later (a move log takes seconds).
    pub fn heard(&mut self, t_ms: Millis) {
        if self
            .last_heard
            .is_some_and(|last| t_ms.saturating_sub(last) >= LINK_DOWN_SILENCE_MS)
        {
            self.after_silence = true;
        }
        self.last_heard = Some(t_ms);
    }

    /// Time passed to `now` without a message: held messages whose handshake never came are
    /// read as they came.
    pub fn advance(&mut self, now: Millis, out: &mut Vec<Resumed>) {
        if self
            .held
            .as_ref()
            .is_some_and(|(since, _)| now > since + HANDSHAKE_WINDOW_MS)
        {
            self.release(out);
        }
    }

    /// Everything held is read as it came (the stream is over).
    pub fn finish(&mut self, out: &mut Vec<Resumed>) {
        self.release(out);
    }

    fn release(&mut self, out: &mut Vec<Resumed>) {
        for (t, m) in self.held.take().map(|(_, h)| h).unwrap_or_default() {
            self.sort(t, m, out);
        }
    }

    /// A message that is not held: in the gap until the board's log or picture comes.
    fn sort(&mut self, t_ms: Millis, m: Message, out: &mut Vec<Resumed>) {
        if !self.awaiting_read {
            self.read_by_log = false;
            out.push(Resumed::Live(t_ms, m));
            return;
        }
        match m {
            Message::EepromMoves(_) | Message::BoardDump(_) => {
                self.awaiting_read = false;
                self.read_by_log = matches!(m, Message::EepromMoves(_));
                out.push(Resumed::Live(t_ms, m));
            }
            Message::FieldUpdate { .. } | Message::Clock(_) => out.push(Resumed::InGap(t_ms, m)),
            other => out.push(Resumed::Live(t_ms, other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(field: u8, piece: u8) -> Message {
        Message::FieldUpdate { field, piece }
    }

    fn sorted(stream: &[(Millis, Message)]) -> Vec<Resumed> {
        let mut r = Resumption::new();
        let mut out = Vec::new();
        for (t, m) in stream {
            r.push(*t, m.clone(), true, &mut out);
        }
        r.finish(&mut out);
        out
    }

    /// The board's first move after the link came back arrives before the handshake's
    /// version reply: it is part of the gap, as is what comes before the board dump.
    #[test]
    fn updates_before_and_after_the_handshake_are_in_the_gap_until_the_dump() {
        let version = Message::Version { major: 1, minor: 2 };
        let dump = Message::BoardDump([0; 64]);
        let out = sorted(&[
            (1_000, update(1, 0)),
            (10_000, update(11, 0)),
            (10_001, update(26, 9)),
            (10_002, version.clone()),
            (10_003, update(12, 0)),
            (10_004, dump.clone()),
            (10_005, update(20, 1)),
        ]);
        assert_eq!(
            out,
            vec![
                Resumed::Live(1_000, update(1, 0)),
                Resumed::LinkBack { t_ms: 10_000 },
                Resumed::InGap(10_000, update(11, 0)),
                Resumed::InGap(10_001, update(26, 9)),
                Resumed::Live(10_002, version),
                Resumed::InGap(10_003, update(12, 0)),
                Resumed::Live(10_004, dump),
                Resumed::Live(10_005, update(20, 1)),
            ]
        );
    }

    /// The link said its connection was lost: the new connection's first update is part of
    /// the gap however late the handshake comes, and the handshake is no second reconnect.
    #[test]
    fn after_the_links_mark_updates_are_in_the_gap_however_late_the_handshake() {
        let version = Message::Version { major: 1, minor: 2 };
        let log = Message::EepromMoves(Vec::new());
        let mut r = Resumption::new();
        let mut out = Vec::new();
        r.push(1_000, update(1, 0), true, &mut out);
        r.link_lost();
        for (t, m) in [
            (1_200, update(11, 0)),
            (4_000, version.clone()),
            (4_100, update(12, 0)),
            (9_000, log.clone()),
            (9_100, update(20, 1)),
        ] {
            r.push(t, m, true, &mut out);
        }
        assert_eq!(
            out,
            vec![
                Resumed::Live(1_000, update(1, 0)),
                Resumed::LinkBack { t_ms: 1_200 },
                Resumed::InGap(1_200, update(11, 0)),
                Resumed::Live(4_000, version),
                Resumed::InGap(4_100, update(12, 0)),
                Resumed::Live(9_000, log),
                Resumed::Live(9_100, update(20, 1)),
            ]
        );
    }

    /// A silence with no handshake after it (a capture of another program, a slow board) is
    /// no reconnect: what came after it is read as it came, in order.
    #[test]
    fn a_silence_without_a_handshake_holds_nothing_back_for_good() {
        let out = sorted(&[
            (1_000, update(1, 0)),
            (5_000, update(2, 0)),
            (5_100, update(3, 0)),
            (5_600, update(4, 0)),
        ]);
        let live: Vec<Millis> = out
            .iter()
            .map(|r| match r {
                Resumed::Live(t, _) => *t,
                other => panic!("only live messages: {other:?}"),
            })
            .collect();
        assert_eq!(live, [1_000, 5_000, 5_100, 5_600]);
    }

    /// A board dump after a silence, with no handshake before it, answers the host on the
    /// connection that was (the verifier's read after updates were lost): it is read at once,
    /// and what was held before it too, in order.
    #[test]
    fn a_dump_after_a_silence_is_read_at_once() {
        let dump = Message::BoardDump([0; 64]);
        let mut r = Resumption::new();
        let mut out = Vec::new();
        r.push(1_000, update(1, 0), true, &mut out);
        r.push(5_000, update(2, 0), true, &mut out);
        assert!(r.holding());
        r.push(5_100, dump.clone(), true, &mut out);
        assert!(!r.holding());
        assert_eq!(
            out,
            vec![
                Resumed::Live(1_000, update(1, 0)),
                Resumed::Live(5_000, update(2, 0)),
                Resumed::Live(5_100, dump.clone()),
            ]
        );
        out.clear();
        r.push(9_000, dump.clone(), true, &mut out);
        assert_eq!(out, vec![Resumed::Live(9_000, dump)]);
    }

    /// Before a game began, a handshake is the first connection, not a reconnect.
    #[test]
    fn a_handshake_before_the_game_is_no_reconnect() {
        let mut r = Resumption::new();
        let mut out = Vec::new();
        r.push(0, Message::Version { major: 1, minor: 2 }, false, &mut out);
        r.push(1, update(3, 0), false, &mut out);
        assert!(
            out.iter().all(|m| matches!(m, Resumed::Live(..))),
            "{out:?}"
        );
    }
}
