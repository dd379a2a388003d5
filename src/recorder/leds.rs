//! Which squares a board's LEDs light, from the recorder's events, and the bytes that light
//! them on each kind of board.
//!
//! At an event the LEDs stay off ([`LedMode::Off`], the default): lights that guide a player
//! are assistance. At home, [`LedMode::LastMove`] shows the last move's squares and
//! [`LedMode::Errors`] the squares to put right while play is held after an illegal or
//! displaced move (the squares whose contents differ from the game).

use shakmaty::Square;

use crate::act::Event;
use crate::board::kind::BoardKind;
use crate::wire::pegasus::{LedPattern, PegasusCommand};
use crate::wire::{certabo, chessnut, millennium};

pub use crate::board::leds::LedMode;

/// Follows the recorder's events and says when the lit squares change.
#[derive(Debug, Clone, Default)]
pub struct LedPlan {
    mode: LedMode,
    lit: Vec<Square>,
}

impl LedPlan {
    /// A plan for `mode`, all LEDs off.
    pub fn new(mode: LedMode) -> LedPlan {
        LedPlan {
            mode,
            lit: Vec::new(),
        }
    }

    /// Takes one event; the squares to light when they change.
    pub fn on_event(&mut self, event: &Event) -> Option<Vec<Square>> {
        let squares = |names: &mut dyn Iterator<Item = &str>| -> Vec<Square> {
            names.filter_map(|n| n.parse().ok()).collect()
        };
        let next = match (self.mode, event) {
            (LedMode::LastMove, Event::Move { uci, .. }) => {
                let (from, to) = (uci.get(..2).unwrap_or(""), uci.get(2..4).unwrap_or(""));
                squares(&mut [from, to].into_iter())
            }
            (LedMode::LastMove, Event::GameStart { .. }) => Vec::new(),
            (
                LedMode::Errors,
                Event::BoardState {
                    held, differing, ..
                },
            ) => {
                if *held {
                    squares(&mut differing.iter().map(String::as_str))
                } else {
                    Vec::new()
                }
            }
            _ => return None,
        };
        (next != self.lit).then(|| {
            self.lit = next.clone();
            next
        })
    }
}

/// The bytes that light the DGT fields `fields` (0 = a8, in the board's own numbering) on a
/// board of `kind` and switch every other LED off; `None` for boards without LEDs.
pub fn led_command(kind: BoardKind, fields: &[u8]) -> Option<Vec<u8>> {
    let fields = fields.iter().copied();
    match kind {
        BoardKind::Dgt => None,
        BoardKind::Millennium if fields.len() == 0 => Some(millennium::Command::LedsOff.encode()),
        BoardKind::Millennium => Some(
            millennium::Command::Leds {
                slot_time: 0x0A,
                patterns: millennium::square_leds(fields, 0xFF),
            }
            .encode(),
        ),
        BoardKind::Chessnut => Some(chessnut::Command::Leds(chessnut::led_bytes(fields)).encode()),
        BoardKind::Certabo | BoardKind::Sentio => Some(certabo::led_bytes(fields).to_vec()),
        BoardKind::Pegasus if fields.len() == 0 => Some(PegasusCommand::LedsOff.encode()),
        // Steady (speed 1, repeat 0 = until changed), at the dimmest documented brightness.
        BoardKind::Pegasus => Some(
            PegasusCommand::Leds(LedPattern {
                speed: 1,
                repeat: 0,
                brightness: 3,
                fields: fields.collect(),
            })
            .encode(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pegasus_lights_its_fields_steadily_and_all_off_with_none() {
        assert_eq!(
            led_command(BoardKind::Pegasus, &[12, 28]),
            Some(vec![0x60, 0x07, 0x05, 1, 0, 3, 12, 28, 0x00])
        );
        assert_eq!(
            led_command(BoardKind::Pegasus, &[]),
            Some(vec![0x60, 0x02, 0x00, 0x00])
        );
    }

    #[test]
    fn errors_light_the_differing_squares_until_play_resumes() {
        let mut plan = LedPlan::new(LedMode::Errors);
        let held = |held: bool, differing: &[&str]| Event::BoardState {
            held,
            differing: differing.iter().map(|s| s.to_string()).collect(),
            t_ms: 0,
        };
        assert_eq!(
            plan.on_event(&held(true, &["e2", "e5"])),
            Some(vec![Square::E2, Square::E5])
        );
        assert_eq!(plan.on_event(&held(true, &["e2", "e5"])), None);
        assert_eq!(plan.on_event(&held(false, &[])), Some(vec![]));
        assert_eq!(
            LedPlan::new(LedMode::Off).on_event(&held(true, &["e2"])),
            None
        );
    }
}
