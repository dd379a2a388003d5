//! Boards that send whole pictures are read again from their next picture after the link
//! was lost or the recorder restarted, whether or not they send a handshake: Certabo and
//! Sentio boards just stream again.

use shakmaty::{Board, Chess, File, Piece, Position, Rank, Square, uci::UciMove};
use touchmove::act::{Event, Severity};
use touchmove::board::kind::BoardKind;
use touchmove::clock::TimeControl;
use touchmove::event::EventConfig;
use touchmove::recorder::{BoardPipeline, GameTags};
use touchmove::wire::{certabo, chessnut, millennium};

/// The square of DGT field `field` (0 = a8 … 63 = h1).
fn square_of(field: usize) -> Square {
    Square::from_coords(File::new(field as u32 % 8), Rank::new(7 - field as u32 / 8))
}

/// A board of `kind` seen by the host: the bytes of one picture of the pieces on it. Each
/// Certabo piece keeps the tag id of its start square, as real tags do.
struct PictureBoard {
    kind: BoardKind,
    /// The tag id of the piece on each square (Certabo).
    tags: [certabo::TagId; 64],
    board: Board,
}

impl PictureBoard {
    fn new(kind: BoardKind) -> PictureBoard {
        let board = Board::new();
        let mut tags = [certabo::NO_TAG; 64];
        for (field, tag) in tags.iter_mut().enumerate() {
            if board.piece_at(square_of(field)).is_some() {
                *tag = [7, field as u8 + 1, 3, 9, 11];
            }
        }
        PictureBoard { kind, tags, board }
    }

    fn field_of(square: Square) -> usize {
        (7 - usize::from(square.rank())) * 8 + usize::from(square.file())
    }

    /// Moves the pieces as `uci` does in `position`, and plays it there.
    fn play(&mut self, position: &mut Chess, uci: &str) {
        let m = uci
            .parse::<UciMove>()
            .unwrap()
            .to_move(position)
            .unwrap_or_else(|e| panic!("{uci} is legal here: {e}"));
        let before = position.board().clone();
        position.play_unchecked(m);
        let after = position.board().clone();
        let mut tags = self.tags;
        // Pieces that left a square give their tags to the squares they reach (a piece of
        // the same kind that arrived), which is enough for the moves played here.
        for square in Square::ALL {
            if before.piece_at(square) != after.piece_at(square) && after.piece_at(square).is_some()
            {
                let from = Square::ALL.into_iter().find(|&s| {
                    before.piece_at(s) == after.piece_at(square) && after.piece_at(s).is_none()
                });
                if let Some(from) = from {
                    tags[Self::field_of(square)] = self.tags[Self::field_of(from)];
                }
            }
        }
        for square in Square::ALL {
            if after.piece_at(square).is_none() {
                tags[Self::field_of(square)] = certabo::NO_TAG;
            }
        }
        self.tags = tags;
        self.board = after;
    }

    fn pieces(&self) -> [Option<Piece>; 64] {
        let mut pieces = [None; 64];
        for (field, piece) in pieces.iter_mut().enumerate() {
            *piece = self.board.piece_at(square_of(field));
        }
        pieces
    }

    fn picture(&self) -> Vec<u8> {
        match self.kind {
            BoardKind::Millennium => millennium::Message::Status(self.pieces()).encode(),
            BoardKind::Certabo => certabo::Frame::Tags(Box::new(self.tags)).encode(),
            BoardKind::Sentio => {
                let mut ranks = [0u8; 8];
                for (field, piece) in self.pieces().iter().enumerate() {
                    if piece.is_some() {
                        ranks[field / 8] |= 0x80 >> (field % 8);
                    }
                }
                certabo::Frame::Occupancy(ranks).encode()
            }
            BoardKind::Chessnut => {
                let mut squares = [None; 64];
                let pieces = self.pieces();
                for (index, square) in squares.iter_mut().enumerate() {
                    *square = pieces[usize::from(chessnut::field_of(index))];
                }
                chessnut::Message::Position {
                    squares,
                    tail: [0xFF; 4],
                }
                .encode()
            }
            kind => panic!("{kind} sends no pictures"),
        }
    }
}

/// Plays `before`, loses the link, plays `unseen` while it is down, and `after` once the
/// board streams again (no handshake), every position shown for a few scans. Gives the
/// moves recorded and the events.
fn relinked(
    kind: BoardKind,
    before: &[&str],
    unseen: &[&str],
    after: &[&str],
) -> (Vec<String>, Vec<Event>) {
    let config = EventConfig::default();
    let mut pipeline = BoardPipeline::new(
        GameTags::new(&config, 1),
        TimeControl::parse("300+2").unwrap(),
    )
    .with_kind(kind);
    let mut board = PictureBoard::new(kind);
    let mut position = Chess::default();
    let mut events = Vec::new();
    let scan = kind.scan_period_ms();
    let mut t = 0;
    let show = |pipeline: &mut BoardPipeline,
                board: &PictureBoard,
                t: &mut u64,
                events: &mut Vec<Event>| {
        for _ in 0..6 {
            pipeline.on_bytes(*t, &board.picture(), events);
            *t += scan;
            pipeline.tick(*t, events);
        }
        *t += 1_500;
        pipeline.tick(*t, events);
    };
    show(&mut pipeline, &board, &mut t, &mut events);
    for uci in before {
        board.play(&mut position, uci);
        show(&mut pipeline, &board, &mut t, &mut events);
    }
    pipeline.link_lost();
    for uci in unseen {
        board.play(&mut position, uci);
    }
    t += 10_000;
    show(&mut pipeline, &board, &mut t, &mut events);
    for uci in after {
        board.play(&mut position, uci);
        show(&mut pipeline, &board, &mut t, &mut events);
    }
    let moves = pipeline
        .record()
        .moves
        .iter()
        .map(|m| m.uci.clone())
        .collect();
    (moves, events)
}

#[test]
fn every_picture_board_is_read_again_after_its_link_was_lost() {
    let before = ["e2e4", "e7e5", "g1f3", "b8c6"];
    let unseen = ["f1b5", "a7a6"];
    let after = ["b5a4", "g8f6", "d2d3"];
    let played: Vec<String> = before
        .iter()
        .chain(&unseen)
        .chain(&after)
        .map(|m| m.to_string())
        .collect();
    for kind in [
        BoardKind::Millennium,
        BoardKind::Certabo,
        BoardKind::Sentio,
        BoardKind::Chessnut,
    ] {
        let (moves, events) = relinked(kind, &before, &unseen, &after);
        assert_eq!(
            moves, played,
            "{kind}: the game goes on after the link came back"
        );
        let penalties: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::Alert(a) if a.article.starts_with("7.5") => Some(a.message.clone()),
                _ => None,
            })
            .collect();
        assert!(
            penalties.is_empty(),
            "{kind}: no penalty from a gap: {penalties:?}"
        );
        let errors: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::Alert(a) if a.severity == Severity::Critical => Some(a.message.clone()),
                _ => None,
            })
            .collect();
        assert!(errors.is_empty(), "{kind}: {errors:?}");
    }
}

#[test]
fn a_picture_board_that_keeps_streaming_through_a_gap_is_read_from_its_first_picture_after() {
    // The same board, the link lost with nothing played meanwhile: the record is unchanged
    // and the next moves are read as they come.
    for kind in [BoardKind::Certabo, BoardKind::Sentio] {
        let (moves, _) = relinked(kind, &["d2d4", "d7d5"], &[], &["c2c4", "e7e6"]);
        assert_eq!(moves, ["d2d4", "d7d5", "c2c4", "e7e6"], "{kind}");
    }
}
