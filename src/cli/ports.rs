//! `touchmove ports`: the serial ports present, with USB ids and the kind of board they tell,
//! and the Chessnut boards on USB HID; `--probe` asks each serial port.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::driver::hid_ports::{HidBoard, list_chessnut_boards};
use crate::driver::kind_probe::{kind_by_usb, kinds_possible_by_usb, probe_kind};
use crate::driver::ports::{DgtLikelihood, PortInfo, Transport, list_ports};

/// Arguments of `touchmove ports`.
#[derive(Debug, clap::Args)]
pub struct PortsArgs {
    /// Where sysfs is mounted (for testing; normally /sys).
    #[arg(long, default_value = "/sys", hide = true)]
    pub sysfs: PathBuf,
    /// Ask every port what board is on it (Millennium, Certabo and many other devices share
    /// their USB chips' ids): a port is opened for about a second each.
    #[arg(long)]
    pub probe: bool,
    /// List the Bluetooth LE boards in reach instead (DGT Pegasus, Chessnut Air, Millennium's
    /// BLE module), scanning for a few seconds; needs a touchmove built with `--features ble`.
    #[arg(long)]
    pub ble: bool,
    /// How long `--ble` scans, in seconds.
    #[arg(long, default_value_t = 5, requires = "ble")]
    pub scan_seconds: u64,
}

/// Why a DGT Pegasus is never listed: it has no serial port.
pub const PEGASUS_NOTE: &str = "a DGT Pegasus is not listed: it speaks Bluetooth LE only; \
     `touchmove ports --ble` lists it and the other Bluetooth LE boards (Chessnut Air, \
     Millennium's BLE module)";

/// Runs `touchmove ports`.
pub fn run(args: PortsArgs) -> ExitCode {
    if args.ble {
        return super::ble_scan::run(args.scan_seconds);
    }
    let ports = list_ports(&args.sysfs);
    let hid_boards = list_chessnut_boards(&args.sysfs);
    if ports.is_empty() && hid_boards.is_empty() {
        println!(
            "no serial ports found; plug the board in (USB) or bind its Bluetooth link \
             (`rfcomm bind 0 <address>`), then run `touchmove ports` again"
        );
        println!("{PEGASUS_NOTE}");
        return ExitCode::SUCCESS;
    }
    let runtime = if args.probe {
        match tokio::runtime::Runtime::new() {
            Ok(rt) => Some(rt),
            Err(e) => {
                eprintln!("touchmove ports: cannot start the runtime: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    for port in &ports {
        let mut line = describe(port);
        if let Some(rt) = &runtime {
            let path = std::path::Path::new(&port.path);
            match rt.block_on(probe_kind(path, std::time::Duration::from_millis(800))) {
                Ok(kind) => line.push_str(&format!(
                    "  => {kind} board (use --port {kind}:{})",
                    port.path
                )),
                Err(why) => line.push_str(&format!("  => {why}")),
            }
        }
        println!("{line}");
    }
    for board in &hid_boards {
        println!("{}", describe_hid(board));
    }
    println!("{PEGASUS_NOTE}");
    ExitCode::SUCCESS
}

/// One line per port: path, transport, USB ids and names, the kind of board the ids tell.
pub fn describe(port: &PortInfo) -> String {
    let by_usb = port.usb.as_ref().and_then(kind_by_usb);
    let possible = port.usb.as_ref().map_or(&[][..], kinds_possible_by_usb);
    let mark = match (port.dgt, by_usb) {
        (DgtLikelihood::Likely, _) => "  <- DGT board".to_string(),
        (_, Some(kind)) => format!("  <- {kind} board"),
        (DgtLikelihood::Possible, _) => "  <- possibly a DGT Bluetooth board".to_string(),
        _ if !possible.is_empty() => {
            let names: Vec<&str> = possible.iter().map(|k| k.name()).collect();
            format!(
                "  <- possibly a {} board (--probe tells)",
                names.join(" or ")
            )
        }
        _ => String::new(),
    };
    let transport = match port.transport {
        Transport::Usb => "usb",
        Transport::Bluetooth => "bluetooth",
        Transport::Native => "serial",
    };
    let usb = port.usb.as_ref().map_or(String::new(), |u| {
        let names: Vec<&str> = [&u.manufacturer, &u.product]
            .into_iter()
            .filter_map(|s| s.as_deref())
            .collect();
        let serial = u
            .serial
            .as_deref()
            .map_or(String::new(), |s| format!(" serial {s}"));
        format!(
            " {:04x}:{:04x} {}{serial}",
            u.vendor_id,
            u.product_id,
            names.join(" ")
        )
    });
    format!("{:<16} {transport:<9}{usb}{mark}", port.path)
        .trim_end()
        .to_string()
}

/// One line per Chessnut HID board: node, ids and name, and how to record it.
pub fn describe_hid(board: &HidBoard) -> String {
    let names: Vec<&str> = [&board.name, &board.serial]
        .into_iter()
        .filter_map(|s| s.as_deref())
        .collect();
    format!(
        "{:<16} {:<9} {:04x}:{:04x} {}  <- chessnut board (use --port chessnut:{})",
        board.path,
        "usb-hid",
        board.vendor_id,
        board.product_id,
        names.join(" serial "),
        board.path
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::ports::UsbInfo;

    #[test]
    fn dgt_usb_port_line_shows_ids_and_mark() {
        let port = PortInfo {
            path: "/dev/ttyACM0".into(),
            transport: Transport::Usb,
            usb: Some(UsbInfo {
                vendor_id: 0x045B,
                product_id: 0x8111,
                manufacturer: Some("DGT".into()),
                product: None,
                serial: Some("A1".into()),
            }),
            dgt: DgtLikelihood::Likely,
        };
        let line = describe(&port);
        assert!(line.starts_with("/dev/ttyACM0"), "{line}");
        assert!(line.contains("045b:8111 DGT serial A1"), "{line}");
        assert!(line.ends_with("<- DGT board"), "{line}");
    }

    #[test]
    fn chessnut_hid_line_names_the_port_to_record() {
        let board = HidBoard {
            path: "/dev/hidraw3".into(),
            vendor_id: 0x2D80,
            product_id: 0x8000,
            name: Some("Chessnut Air".into()),
            serial: None,
        };
        let line = describe_hid(&board);
        assert!(
            line.starts_with("/dev/hidraw3     usb-hid   2d80:8000 Chessnut Air"),
            "{line}"
        );
        assert!(
            line.ends_with("(use --port chessnut:/dev/hidraw3)"),
            "{line}"
        );
    }
}
