//! The board after its game: a game is closed, never replaced, when the pieces are set up
//! again.
//!
//! Once a game has moves or a result, a new set-up on the board closes it
//! ([`Event::GameClosed`]): the record stays as it is — with its result, or with `*` until
//! the arbiter gives one — whatever the board shows next (the pieces swept off and set back,
//! a post-mortem, the board switched off). What the machine reads from then on is kept
//! aside, not recorded and not published; the journal has the bytes. Only the arbiter
//! starts a new game on the board (a replay, an Armageddon, a restart after a wrong
//! set-up): it is recorded beside the closed one, from the board's last set-up.

use super::BoardPipeline;
use crate::act::{Alert, Event, Severity};
use crate::board::Millis;
use crate::clock::ClockState;
use crate::rules::Game;

/// A game set up again after at most this many plies, without a result, may be a restart
/// (wrong colours, a wrong set-up): the desk asks the arbiter.
pub const RESTART_PLIES: usize = 6;

/// A board after its game was closed: what the machine told since the board was last set
/// up, for a game the players began before the arbiter started it.
#[derive(Debug, Clone, Default)]
pub(super) struct AfterGame {
    since_setup: Vec<Event>,
}

impl AfterGame {
    /// Keeps `event`; a new set-up starts over.
    fn keep(&mut self, event: Event) {
        if matches!(event, Event::GameStart { .. }) {
            self.since_setup.clear();
        }
        self.since_setup.push(event);
    }
}

impl BoardPipeline {
    /// Passes on an event of the machine for the record, unless the board is after its
    /// game: then the event is kept aside. A set-up that closes the game tells it in `out`.
    pub(super) fn unless_after_game(
        &mut self,
        event: Event,
        out: &mut Vec<Event>,
    ) -> Option<Event> {
        if let Some(after) = &mut self.after {
            after.keep(event);
            return None;
        }
        match event {
            Event::GameStart { t_ms, .. } if self.has_game() => {
                if let Some(alert) = self.closed_unread(t_ms) {
                    self.take(&alert);
                    out.push(alert);
                }
                out.push(self.closed_at(t_ms));
                self.after = Some(AfterGame {
                    since_setup: vec![event],
                });
                None
            }
            event => Some(event),
        }
    }

    /// The game has moves or a result: a new set-up closes it rather than replacing it. A
    /// result the arbiter entered for a game the recorder never saw begin (it came up too
    /// late to read it, and said so) ends the board's game too: the start position shown
    /// after it is a post-mortem or the next round's set-up, not a game of this round.
    fn has_game(&self) -> bool {
        !self.moves.is_empty() || self.ending.is_some()
    }

    /// 8.5.3: a game without a result closed at `t_ms` by a set-up the board showed when it
    /// was read again after its link was down, nothing recorded since: the moves made
    /// before the pieces were set up again were never seen, and the record may stop short
    /// of the game.
    fn closed_unread(&self, t_ms: Millis) -> Option<Event> {
        if self.ending.is_some() || self.link_back_plies != Some(self.moves.len()) {
            return None;
        }
        let plies = self.moves.len();
        Some(Event::Alert(Alert {
            article: "8.5.3".to_string(),
            side: None,
            ply: plies as u32 + 1,
            t_ms,
            evidence_ms: vec![t_ms],
            squares: Vec::new(),
            severity: Severity::Warning,
            message: format!(
                "the game was closed without a result by a new set-up, found when the board was \
                 read again after its link was down: moves made after ply {plies} before the \
                 pieces were set up again were not seen, and the arbiter should compare the \
                 record with the scoresheets and add any move made"
            ),
            gap: None,
            withdraws: Vec::new(),
            before_game: false,
        }))
    }

    /// The game is closed at `t_ms` by a new set-up: what the desk is told.
    fn closed_at(&self, t_ms: Millis) -> Event {
        Event::GameClosed {
            t_ms,
            plies: self.moves.len() as u32,
            result: self.result().to_string(),
            restart: self.ending.is_none() && self.moves.len() <= RESTART_PLIES,
        }
    }

    /// True once the game was closed by a new set-up ([`Event::GameClosed`]): what the
    /// board shows is after the game.
    pub fn after_game(&self) -> bool {
        self.after.is_some()
    }

    /// Every game recorded on this board, earliest first, as PGN text: what its
    /// `game-K.pgn` holds. A game the arbiter started after another is recorded beside it.
    pub fn board_pgn(&self) -> String {
        self.earlier_games
            .iter()
            .map(crate::record::pgn::write_game)
            .chain([self.pgn()])
            .collect()
    }

    /// The arbiter starts a new game on a board after its game was closed: the closed game
    /// stays in the board's file, and the new game is recorded beside it, from the board's
    /// last set-up (the players may have begun it already). Returns the sentence for the
    /// arbiter; the events of the new game so far go to `out`.
    pub(super) fn new_game_after(&mut self, who: &str, board: u32, out: &mut Vec<Event>) -> String {
        let since_setup = self.after.take().map(|a| a.since_setup).unwrap_or_default();
        self.notes.push((
            self.moves.len() as u32,
            format!("Arbiter {who}: a new game on this board follows this one"),
        ));
        self.close_game();
        self.clock = ClockState::new(self.control.clone());
        self.started = false;
        self.game = Game::standard();
        self.start_fen = None;
        self.chess960 = false;
        let set_up = matches!(since_setup.first(), Some(Event::GameStart { .. }));
        for event in since_setup {
            self.take(&event);
            out.push(event);
        }
        if set_up {
            format!(
                "board {board}: new game, recorded from the set-up on the board ({} plies so \
                 far); the earlier game stays in the board's file",
                self.moves.len()
            )
        } else {
            format!(
                "board {board}: new game; set up the start position (the earlier game stays in \
                 the board's file)"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::dgt::{code_from_piece, fields_from_board};
    use crate::board::orientation::Orientation;
    use crate::clock::TimeControl;
    use crate::event::EventConfig;
    use crate::record::arbiter::{ArbiterAction, ArbiterRequest};
    use crate::record::pgn::read_games;
    use crate::recorder::pipeline::GameTags;
    use crate::wire::dgt::Message;
    use shakmaty::{Board, Position, Square};

    /// A board playing through the pipeline: every change goes square by square, a lift
    /// before a placement, 400 ms apart.
    struct Table {
        pipeline: BoardPipeline,
        board: Board,
        /// The game the players are playing on it.
        game: Game,
        t_ms: Millis,
        events: Vec<Event>,
    }

    impl Table {
        fn new() -> Table {
            let config = EventConfig {
                event: "After the game".into(),
                ..EventConfig::default()
            };
            let control = TimeControl::parse("600").unwrap();
            let mut table = Table {
                pipeline: BoardPipeline::new(GameTags::new(&config, 1), control),
                board: Board::new(),
                game: Game::standard(),
                t_ms: 10,
                events: Vec::new(),
            };
            let dump = Message::BoardDump(fields_from_board(&Board::new(), Orientation::Normal));
            table.send(&dump.encode());
            table
        }

        fn send(&mut self, bytes: &[u8]) {
            self.pipeline.on_bytes(self.t_ms, bytes, &mut self.events);
            self.t_ms += 400;
        }

        fn set(&mut self, sq: Square, piece: Option<shakmaty::Piece>) {
            let field = (7 - u8::from(sq.rank())) * 8 + u8::from(sq.file());
            let piece = piece.map_or(0, code_from_piece);
            self.send(&Message::FieldUpdate { field, piece }.encode());
        }

        /// The pieces go from where they stand to `to`: lifts first, then placements.
        fn change_to(&mut self, to: &Board) {
            let from = self.board.clone();
            for sq in from.occupied() {
                if from.piece_at(sq) != to.piece_at(sq) {
                    self.set(sq, None);
                }
            }
            for sq in to.occupied() {
                if from.piece_at(sq) != to.piece_at(sq) {
                    self.set(sq, to.piece_at(sq));
                }
            }
            self.board = to.clone();
        }

        /// Plays `moves` (UCI) on.
        fn play(&mut self, moves: &[&str]) {
            for m in moves {
                self.game.play_uci(m).unwrap();
                let next = self.game.position().board().clone();
                self.change_to(&next);
            }
        }

        /// The players set the pieces back on their start squares.
        fn set_up_again(&mut self) {
            self.change_to(&Board::new());
            self.game = Game::standard();
            // Let the machine's deadlines pass.
            self.t_ms += 5_000;
            self.pipeline.tick(self.t_ms, &mut self.events);
        }

        fn arbiter(&mut self, action: ArbiterAction) -> Result<String, String> {
            let request = ArbiterRequest {
                board: 1,
                who: "Anna".into(),
                action,
                key: None,
            };
            self.pipeline
                .on_arbiter(self.t_ms, &request, &mut self.events)
        }

        fn closed(&self) -> Vec<&Event> {
            self.events
                .iter()
                .filter(|e| matches!(e, Event::GameClosed { .. }))
                .collect()
        }
    }

    fn uci(record: &crate::record::GameRecord) -> Vec<String> {
        record
            .to_game()
            .map(|g| g.moves().iter().map(|m| m.uci.clone()).collect())
            .unwrap_or_default()
    }

    const MATE: [&str; 4] = ["f2f3", "e7e5", "g2g4", "d8h4"];
    const OPENING: [&str; 10] = [
        "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "d2d3", "f8e7",
    ];

    /// Fool's mate, then the pieces set back and a post-mortem played: the game stays as
    /// it ended, and nothing after it is published.
    #[test]
    fn a_mate_stays_when_the_pieces_are_set_back_and_a_post_mortem_follows() {
        let mut table = Table::new();
        table.play(&MATE);
        table.t_ms += 5_000;
        table.pipeline.tick(table.t_ms, &mut table.events);
        assert_eq!(table.pipeline.result(), "0-1");
        let ended = table.pipeline.pgn();
        table.set_up_again();
        let published = table.events.len();
        table.play(&["e2e4", "c7c5", "g1f3"]);
        table.set_up_again();
        table.play(&["d2d4", "d7d5"]);
        assert_eq!(table.pipeline.pgn(), ended);
        assert_eq!(table.pipeline.board_pgn(), ended);
        assert_eq!(uci(&table.pipeline.record()), MATE);
        assert!(!table.pipeline.live());
        assert!(table.pipeline.after_game());
        assert!(
            matches!(
                table.closed()[..],
                [Event::GameClosed { plies: 4, result, restart: false, .. }] if result == "0-1"
            ),
            "{:?}",
            table.closed()
        );
        assert_eq!(
            table.events.len(),
            published,
            "nothing after the game is published: {:?}",
            &table.events[published..]
        );
    }

    /// The commonest ending: a resignation, nobody signals, the pieces are set back. The
    /// moves stay with `*` until the arbiter's result completes the game.
    #[test]
    fn a_game_without_a_result_keeps_its_moves_and_takes_the_arbiters_result() {
        let mut table = Table::new();
        table.play(&OPENING);
        table.set_up_again();
        assert_eq!(uci(&table.pipeline.record()), OPENING);
        assert_eq!(table.pipeline.result(), "*");
        assert!(!table.pipeline.live());
        assert!(matches!(
            table.closed()[..],
            [Event::GameClosed { plies: 10, result, restart: false, .. }] if result == "*"
        ));
        table.play(&["e2e4"]);
        table
            .arbiter(ArbiterAction::SetResult {
                result: "1-0".into(),
                reason: "Black resigned".into(),
            })
            .unwrap();
        let record = table.pipeline.record();
        assert_eq!(uci(&record), OPENING);
        assert_eq!(record.result, "1-0");
    }

    /// A set-up again after two moves may be a restart: the desk is told, and the arbiter's
    /// new game is recorded from the set-up, with the abandoned moves kept before it.
    #[test]
    fn a_restart_is_the_arbiters_and_keeps_the_abandoned_moves() {
        let mut table = Table::new();
        table.play(&OPENING[..3]);
        table.set_up_again();
        assert!(matches!(
            table.closed()[..],
            [Event::GameClosed {
                plies: 3,
                restart: true,
                ..
            }]
        ));
        table.play(&["d2d4", "d7d5"]);
        assert_eq!(uci(&table.pipeline.record()), &OPENING[..3]);
        let answer = table.arbiter(ArbiterAction::NewGame).unwrap();
        assert!(answer.contains("2 plies so far"), "{answer}");
        table.play(&["c2c4"]);
        assert_eq!(uci(&table.pipeline.record()), ["d2d4", "d7d5", "c2c4"]);
        assert!(table.pipeline.live());
        let games = read_games(&table.pipeline.board_pgn()).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(uci(&games[0]), &OPENING[..3]);
        assert_eq!(games[0].result, "*");
        assert_eq!(uci(&games[1]), ["d2d4", "d7d5", "c2c4"]);
    }

    /// A second game really played (an Armageddon after a draw) is recorded beside the
    /// first once the arbiter starts it; before that, it is not recorded over the first.
    #[test]
    fn a_second_game_is_recorded_beside_the_first_when_the_arbiter_starts_it() {
        let mut table = Table::new();
        table.play(&OPENING);
        table
            .arbiter(ArbiterAction::SetResult {
                result: "1/2-1/2".into(),
                reason: "agreed".into(),
            })
            .unwrap();
        table.set_up_again();
        let first = table.pipeline.pgn();
        table.play(&MATE);
        assert_eq!(table.pipeline.board_pgn(), first);
        table.set_up_again();
        table.arbiter(ArbiterAction::NewGame).unwrap();
        table.play(&MATE);
        table.t_ms += 5_000;
        table.pipeline.tick(table.t_ms, &mut table.events);
        let games = read_games(&table.pipeline.board_pgn()).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(uci(&games[0]), OPENING);
        assert_eq!(games[0].result, "1/2-1/2");
        assert_eq!(uci(&games[1]), MATE);
        assert_eq!(games[1].result, "0-1");
    }

    /// A result signal can be corrected while the kings stand; once a piece leaves the
    /// final position (the board is being cleared), kings passing the centre squares change
    /// nothing.
    #[test]
    fn a_result_signal_is_closed_once_the_pieces_leave_the_final_position() {
        use shakmaty::{Color, Piece, Role};
        let king = |color| {
            Some(Piece {
                color,
                role: Role::King,
            })
        };
        let mut table = Table::new();
        table.play(&["g1f3", "g8f6", "b1c3", "b8c6"]);
        for (from, to, color) in [
            (Square::E1, Square::E4, Color::White),
            (Square::E8, Square::D5, Color::Black),
        ] {
            table.set(from, None);
            table.set(to, king(color));
        }
        table.t_ms += 2_000;
        table.pipeline.tick(table.t_ms, &mut table.events);
        assert_eq!(table.pipeline.result(), "1-0");
        // The arbiter puts the kings right while nothing else moved: the signal that
        // stands counts.
        table.set(Square::D5, None);
        table.set(Square::E5, king(Color::Black));
        table.set(Square::E4, None);
        table.set(Square::D4, king(Color::White));
        assert_eq!(table.pipeline.result(), "0-1");
        // The players clear the board: a pawn first, then the kings pass the centre.
        table.set(Square::A2, None);
        table.set(Square::E5, None);
        table.set(Square::D5, king(Color::Black));
        table.set(Square::D4, None);
        table.set(Square::E4, king(Color::White));
        table.t_ms += 2_000;
        table.pipeline.tick(table.t_ms, &mut table.events);
        assert_eq!(table.pipeline.result(), "0-1");
    }
}
