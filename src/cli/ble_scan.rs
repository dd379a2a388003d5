//! `touchmove ports --ble`: a few seconds of Bluetooth LE scanning, listing the boards
//! recognised by their service (or, failing that, their name), each with the `--port` that
//! records it.

use std::process::ExitCode;
use std::time::Duration;

use crate::driver::ble::{ScannedBoard, scan};
use crate::wire::gatt::{Recognition, address_text};

/// Scans for `seconds` and prints one line per board found; a scan that cannot run says why
/// (exit status 1).
pub fn run(seconds: u64) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("touchmove ports --ble: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("scanning for Bluetooth LE boards for {seconds} s…");
    match runtime.block_on(scan(Duration::from_secs(seconds))) {
        Err(message) => {
            eprintln!("touchmove ports --ble: {message}");
            ExitCode::FAILURE
        }
        Ok(boards) if boards.is_empty() => {
            println!(
                "no Bluetooth LE board in reach; switch the board on and close the maker's app \
                 (a board takes one connection at a time)"
            );
            ExitCode::SUCCESS
        }
        Ok(boards) => {
            for board in &boards {
                println!("{}", describe(board));
            }
            ExitCode::SUCCESS
        }
    }
}

/// One line: address, name, kind and how sure, signal, and the port that records it.
pub fn describe(board: &ScannedBoard) -> String {
    let address = address_text(board.address);
    let name = board
        .name
        .as_deref()
        .map_or(String::new(), |n| format!(" \"{n}\""));
    let how = match board.recognition {
        Recognition::Sure => "",
        Recognition::ByService => " (by its service; Square Off and iChessOne share it)",
        Recognition::ByName => " (by its name)",
    };
    let rssi = board.rssi.map_or(String::new(), |r| format!(" {r} dBm"));
    format!(
        "ble:{address}{name}  {kind} board{how}{rssi}  (use --port {kind}:ble:{address})",
        kind = board.kind
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::kind::BoardKind;

    #[test]
    fn a_board_line_gives_the_port_that_records_it() {
        let line = describe(&ScannedBoard {
            address: [0xC4, 0xDE, 0xE2, 0x01, 0x02, 0x0F],
            name: Some("DGT_PEGASUS_20412".into()),
            kind: BoardKind::Pegasus,
            recognition: Recognition::Sure,
            rssi: Some(-61),
        });
        assert_eq!(
            line,
            "ble:C4:DE:E2:01:02:0F \"DGT_PEGASUS_20412\"  pegasus board -61 dBm  (use --port \
             pegasus:ble:C4:DE:E2:01:02:0F)"
        );
    }
}
