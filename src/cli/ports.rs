//! `touchmove ports`: the serial ports present, with USB ids, likely DGT boards marked.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::driver::ports::{DgtLikelihood, PortInfo, Transport, list_ports};

/// Arguments of `touchmove ports`.
#[derive(Debug, clap::Args)]
pub struct PortsArgs {
    /// Where sysfs is mounted (for testing; normally /sys).
    #[arg(long, default_value = "/sys", hide = true)]
    pub sysfs: PathBuf,
}

/// Runs `touchmove ports`.
pub fn run(args: PortsArgs) -> ExitCode {
    let ports = list_ports(&args.sysfs);
    if ports.is_empty() {
        println!(
            "no serial ports found; plug the board in (USB) or bind its Bluetooth link \
             (`rfcomm bind 0 <address>`), then run `touchmove ports` again"
        );
        return ExitCode::SUCCESS;
    }
    for port in &ports {
        println!("{}", describe(port));
    }
    ExitCode::SUCCESS
}

/// One line per port: path, transport, USB ids and names, DGT mark.
pub fn describe(port: &PortInfo) -> String {
    let mark = match port.dgt {
        DgtLikelihood::Likely => "  <- DGT board",
        DgtLikelihood::Possible => "  <- possibly a DGT Bluetooth board",
        DgtLikelihood::Unlikely => "",
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
}
