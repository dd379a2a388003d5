//! The kinds of board the recorder reads, by the protocol each speaks, and the facts of each
//! product that the layers above read (what it senses, how fast it scans, whether it keeps a
//! move log). Below the board layer, so that a protocol's description (its GATT profile) can
//! name its kind.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{Millis, certabo};

/// A kind of electronic board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoardKind {
    /// DGT e-board (USB, serial, Bluetooth serial).
    #[default]
    Dgt,
    /// Millennium ChessLink, Exclusive, Performance, eONE.
    Millennium,
    /// Certabo (RFID tag per piece).
    Certabo,
    /// Certabo Sentio / Tabutronic (occupancy only).
    Sentio,
    /// Chessnut Air, Air+, Pro.
    Chessnut,
    /// DGT Pegasus: DGT's framing and field updates, occupancy only, streaming after the
    /// developer key (Bluetooth LE; a serial path carries the same bytes).
    Pegasus,
}

impl BoardKind {
    /// Every kind, in the order they are listed to users.
    pub const ALL: [BoardKind; 6] = [
        BoardKind::Dgt,
        BoardKind::Millennium,
        BoardKind::Certabo,
        BoardKind::Sentio,
        BoardKind::Chessnut,
        BoardKind::Pegasus,
    ];

    /// The name used in event files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            BoardKind::Dgt => "dgt",
            BoardKind::Millennium => "millennium",
            BoardKind::Certabo => "certabo",
            BoardKind::Sentio => "sentio",
            BoardKind::Chessnut => "chessnut",
            BoardKind::Pegasus => "pegasus",
        }
    }

    /// False for boards that sense only occupancy (Sentio, Pegasus): they take the
    /// occupancy-only path, where a promotion's piece is the arbiter's (4.6).
    pub fn identifies_pieces(self) -> bool {
        !matches!(self, BoardKind::Sentio | BoardKind::Pegasus)
    }

    /// How long the board takes to read all its squares once: a DGT board samples its
    /// squares one by one in about 250 ms; a Millennium board scans every 41 ms (register
    /// 0x01's default); a Certabo frame of about 820 characters fills the 38400-baud line
    /// for 210 ms, so frames come about 3 a second; Sentio and Chessnut about 10. No
    /// document gives the Pegasus's scan: it reports field changes one by one as DGT boards
    /// do, and is modelled as DGT's Bluetooth boards, which scan at half a USB board's
    /// speed (`protocols` 1.7).
    pub fn scan_period_ms(self) -> Millis {
        match self {
            BoardKind::Dgt => 250,
            BoardKind::Pegasus => 500,
            BoardKind::Millennium => 41,
            BoardKind::Certabo => 300,
            BoardKind::Sentio | BoardKind::Chessnut => 100,
        }
    }

    /// How long a change takes to show on the host after it happens: one scan, and for
    /// Certabo the frames its vote needs.
    pub fn report_delay_ms(self) -> Millis {
        match self {
            BoardKind::Certabo => self.scan_period_ms() * (certabo::VOTE_DEPTH as u64 / 2 + 1),
            _ => self.scan_period_ms(),
        }
    }

    /// How long one frame takes on the line (38400 baud carries 3840 bytes a second): a
    /// Millennium status is 67 bytes, a Certabo frame about 820 characters, a Chessnut
    /// position 38 bytes, a Sentio frame about 30 characters. Zero for DGT (its updates are
    /// modelled one by one).
    pub fn frame_transfer_ms(self) -> Millis {
        let bytes = match self {
            BoardKind::Dgt | BoardKind::Pegasus => 0,
            BoardKind::Millennium => 67,
            BoardKind::Certabo => 820,
            BoardKind::Sentio => 30,
            BoardKind::Chessnut => 38,
        };
        bytes * 1000 / 3840
    }

    /// How much later than the clock a square's change reaches the host: the report delay and
    /// one frame on the line for boards that send whole frames; 0 for DGT, whose square
    /// updates and clock messages come on one line as they happen (and for the Pegasus,
    /// which has no clock).
    pub fn report_lag_ms(self) -> Millis {
        if self.sends_snapshots() {
            self.report_delay_ms() + self.frame_transfer_ms()
        } else {
            0
        }
    }

    /// True for boards with LEDs the host can light.
    pub fn has_leds(self) -> bool {
        self != BoardKind::Dgt
    }

    /// True for boards that send whole-board frames (not DGT and Pegasus, which report
    /// each field change).
    pub fn sends_snapshots(self) -> bool {
        !matches!(self, BoardKind::Dgt | BoardKind::Pegasus)
    }

    /// True for boards that keep a move log the host can read after a gap (DGT's EEPROM
    /// log); the others are read again from their position.
    pub fn has_move_log(self) -> bool {
        self == BoardKind::Dgt
    }

    /// True for boards that stream only after the host gave DGT's developer key (Pegasus).
    pub fn needs_developer_key(self) -> bool {
        self == BoardKind::Pegasus
    }
}

impl fmt::Display for BoardKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BoardKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim().to_ascii_lowercase();
        BoardKind::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = BoardKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown board kind `{text}`: give one of {}",
                    names.join(", ")
                )
            })
    }
}
