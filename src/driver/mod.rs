//! Serial drivers (tokio): they own the ports and feed received bytes to the core.
//!
//! [`dgt`] is the link to one DGT board (handshake, watchdog, reconnection, clock command
//! pacing); [`bus`] polls a chain of tournament boards on one port, and [`bus_boards`] hands
//! each board of the chain its own events; [`ports`] finds serial ports; [`probe`] asks a port
//! which board is behind it; [`kind_probe`] which kind; [`serial`] opens them with errors
//! that name the fix; [`snapshot_link`] is the link to a board of another kind, which sends
//! whole-board frames, on a serial port or through [`hidraw`] (Chessnut over USB HID, whose
//! boards [`hid_ports`] finds; [`report_socket`] carries a virtual one's reports);
//! [`verify`] decides when a link re-reads the whole board to correct lost field updates.
//! [`board_stream`] is what a link reads through (a serial port, a hidraw node, or a
//! Bluetooth LE board from [`ble`]).

pub mod backoff;
pub mod ble;
pub mod board_stream;
pub mod bus;
pub mod bus_boards;
pub mod clock_pacing;
pub mod dgt;
pub mod hid_ports;
pub mod hidraw;
pub mod kind_probe;
pub mod ports;
pub mod probe;
pub mod report_socket;
pub mod serial;
pub mod snapshot_link;
pub mod verify;
