//! Serial port discovery from sysfs (no libudev): every tty backed by real hardware, with the
//! USB vendor/product ids of the device behind it, and whether it is likely a DGT board.

use std::fs;
use std::path::{Path, PathBuf};

/// USB vendor id of DGT (Digital Game Technology).
pub const DGT_USB_VENDOR_ID: u16 = 0x045B;

/// One serial port found on the system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortInfo {
    /// Device path, e.g. `/dev/ttyACM0`.
    pub path: String,
    /// How the port is attached.
    pub transport: Transport,
    /// USB details when the port is a USB device.
    pub usb: Option<UsbInfo>,
    /// How likely the port is a DGT board.
    pub dgt: DgtLikelihood,
}

/// How a serial port is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A USB device (CDC-ACM or a USB-serial adapter).
    Usb,
    /// A classic Bluetooth serial link (RFCOMM).
    Bluetooth,
    /// A built-in or PCI serial port.
    Native,
}

/// USB identification read from sysfs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsbInfo {
    /// Vendor id.
    pub vendor_id: u16,
    /// Product id.
    pub product_id: u16,
    /// Manufacturer string, if the device has one.
    pub manufacturer: Option<String>,
    /// Product string, if the device has one.
    pub product: Option<String>,
    /// Serial number string, if the device has one.
    pub serial: Option<String>,
}

/// Whether a port is probably a DGT board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DgtLikelihood {
    /// Nothing suggests a DGT board.
    Unlikely,
    /// Could be one (a Bluetooth serial link, or a generic USB-serial adapter used by older
    /// serial boards).
    Possible,
    /// DGT's USB vendor id or a DGT product string.
    Likely,
}

/// Lists the serial ports described under `sysfs_root` (normally `/sys`), sorted by path.
/// Device paths are reported under `/dev`.
pub fn list_ports(sysfs_root: &Path) -> Vec<PortInfo> {
    let mut ports: Vec<PortInfo> = class_devices(sysfs_root, "tty")
        .filter_map(|(name, dir)| describe(&dir, &name))
        .collect();
    ports.sort_by(|a, b| a.path.cmp(&b.path));
    ports
}

/// The devices of a sysfs class (`/sys/class/CLASS/NAME`): each name and its directory. None
/// when the class does not exist (no such device was ever plugged in).
pub(super) fn class_devices(
    sysfs_root: &Path,
    class: &str,
) -> impl Iterator<Item = (String, PathBuf)> {
    let class = sysfs_root.join("class").join(class);
    fs::read_dir(&class)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(move |entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let dir = class.join(&name);
            (name, dir)
        })
}

fn describe(tty_dir: &Path, name: &str) -> Option<PortInfo> {
    let path = format!("/dev/{name}");
    if name.starts_with("rfcomm") {
        return Some(PortInfo {
            path,
            transport: Transport::Bluetooth,
            usb: None,
            dgt: DgtLikelihood::Possible,
        });
    }
    // Virtual terminals, ptys and the console have no `device` link.
    let device = fs::canonicalize(tty_dir.join("device")).ok()?;
    if let Some(usb) = usb_ancestor(&device) {
        let dgt = dgt_likelihood(&usb);
        return Some(PortInfo {
            path,
            transport: Transport::Usb,
            usb: Some(usb),
            dgt,
        });
    }
    // The 8250 driver registers ports that may have no hardware behind them; a real one
    // reports a non-zero I/O port or memory address.
    let driver = fs::canonicalize(device.join("driver"))
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()));
    if driver.as_deref() == Some("serial8250") && !has_hardware(tty_dir) {
        return None;
    }
    Some(PortInfo {
        path,
        transport: Transport::Native,
        usb: None,
        dgt: DgtLikelihood::Unlikely,
    })
}

fn has_hardware(tty_dir: &Path) -> bool {
    let nonzero = |file: &str| {
        read_trimmed(&tty_dir.join(file))
            .map(|v| {
                !v.trim_start_matches("0x")
                    .trim_start_matches('0')
                    .is_empty()
            })
            .unwrap_or(false)
    };
    nonzero("port") || nonzero("iomem_base")
}

/// Walks up from the tty's device to the USB device that carries `idVendor`.
fn usb_ancestor(device: &Path) -> Option<UsbInfo> {
    let mut dir: Option<PathBuf> = Some(device.to_path_buf());
    while let Some(d) = dir {
        if let Some(vendor_id) = read_hex(&d.join("idVendor")) {
            return Some(UsbInfo {
                vendor_id,
                product_id: read_hex(&d.join("idProduct")).unwrap_or(0),
                manufacturer: read_trimmed(&d.join("manufacturer")),
                product: read_trimmed(&d.join("product")),
                serial: read_trimmed(&d.join("serial")),
            });
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    None
}

fn dgt_likelihood(usb: &UsbInfo) -> DgtLikelihood {
    let names_dgt = |s: &Option<String>| {
        s.as_deref()
            .is_some_and(|s| s.to_ascii_uppercase().contains("DGT"))
    };
    if usb.vendor_id == DGT_USB_VENDOR_ID || names_dgt(&usb.manufacturer) || names_dgt(&usb.product)
    {
        DgtLikelihood::Likely
    } else {
        DgtLikelihood::Unlikely
    }
}

fn read_trimmed(path: &Path) -> Option<String> {
    let s = fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn read_hex(path: &Path) -> Option<u16> {
    u16::from_str_radix(&read_trimmed(path)?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Builds a miniature sysfs: one DGT USB board, one FTDI adapter, a Bluetooth link, a
    /// phantom 8250 port, a real 8250 port and a virtual terminal.
    fn fake_sysfs() -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("tempdir");
        let r = root.path();
        let class = r.join("class/tty");
        fs::create_dir_all(&class).expect("mkdir");
        let usb_tty = |bus: &str, tty: &str, vid: &str, pid: &str, product: &str| {
            let dev = r.join(format!("devices/pci0000:00/usb1/{bus}"));
            let iface = dev.join(format!("{bus}:1.0"));
            fs::create_dir_all(iface.join("tty").join(tty)).expect("mkdir");
            fs::write(dev.join("idVendor"), format!("{vid}\n")).expect("write");
            fs::write(dev.join("idProduct"), format!("{pid}\n")).expect("write");
            fs::write(dev.join("product"), format!("{product}\n")).expect("write");
            symlink(iface.join("tty").join(tty), class.join(tty)).expect("symlink");
            symlink(&iface, iface.join("tty").join(tty).join("device")).expect("symlink");
        };
        usb_tty("1-1", "ttyACM0", "045b", "8111", "DGT Smart Board");
        usb_tty("1-2", "ttyUSB0", "0403", "6001", "FT232R USB UART");
        fs::create_dir_all(class.join("rfcomm0")).expect("mkdir");
        let platform = |tty: &str, port: &str| {
            let dev = r.join(format!("devices/platform/serial8250/{tty}"));
            let drv = r.join("bus/platform/drivers/serial8250");
            fs::create_dir_all(&dev).expect("mkdir");
            fs::create_dir_all(&drv).expect("mkdir");
            symlink(&drv, dev.join("driver")).expect("symlink");
            let tty_dir = class.join(tty);
            fs::create_dir_all(&tty_dir).expect("mkdir");
            symlink(&dev, tty_dir.join("device")).expect("symlink");
            fs::write(tty_dir.join("port"), port).expect("write");
        };
        platform("ttyS0", "0x3F8\n");
        platform("ttyS5", "0x0\n");
        fs::create_dir_all(class.join("tty1")).expect("mkdir");
        root
    }

    #[test]
    fn lists_hardware_ports_with_usb_ids_and_marks_dgt() {
        let root = fake_sysfs();
        let ports = list_ports(root.path());
        let paths: Vec<&str> = ports.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            ["/dev/rfcomm0", "/dev/ttyACM0", "/dev/ttyS0", "/dev/ttyUSB0"]
        );
        let acm = &ports[1];
        let usb = acm.usb.as_ref().expect("usb info");
        assert_eq!((usb.vendor_id, usb.product_id), (0x045B, 0x8111));
        assert_eq!(acm.dgt, DgtLikelihood::Likely);
        assert_eq!(ports[0].transport, Transport::Bluetooth);
        assert_eq!(ports[0].dgt, DgtLikelihood::Possible);
        assert_eq!(ports[3].dgt, DgtLikelihood::Unlikely);
        assert_eq!(ports[2].transport, Transport::Native);
    }

    #[test]
    fn missing_sysfs_gives_no_ports() {
        assert!(list_ports(Path::new("/nonexistent-sysfs")).is_empty());
    }
}
