//! Which board the virtual board is: a DGT board, or a Phoenix Revelation II (a DGT board
//! with LEDs, told apart by its long serial number).

use crate::wire::revelation::RevelationLeds;

/// The make of a virtual board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoardModel {
    /// A DGT board.
    #[default]
    Dgt,
    /// A Phoenix Revelation II: the DGT protocol plus the LED command, and a long serial
    /// number that begins with its firmware version.
    RevelationII,
}

impl BoardModel {
    /// The long serial number (0x55 → 0xA2) of a board with this five-digit serial number.
    pub fn long_serial(self, serial: &str) -> String {
        match self {
            BoardModel::Dgt => format!("{serial:0>10}"),
            BoardModel::RevelationII => format!("3.25{serial:0>6}")[..10].to_string(),
        }
    }
}

/// The LEDs of a Revelation II, lit or not, by DGT field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leds(pub [bool; 64]);

impl Default for Leds {
    fn default() -> Self {
        Leds([false; 64])
    }
}

impl Leds {
    /// Applies an LED command.
    pub fn apply(&mut self, command: RevelationLeds) {
        match command {
            RevelationLeds::Fields { on, start, end } => {
                let (a, b) = (start.min(end), start.max(end));
                for lit in &mut self.0[usize::from(a)..=usize::from(b)] {
                    *lit = on;
                }
            }
            RevelationLeds::AllOff => self.0 = [false; 64],
            RevelationLeds::AutoOff(_) | RevelationLeds::AutoReverse(_) => {}
        }
    }
}
