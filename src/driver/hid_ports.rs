//! Chessnut boards on USB HID, found in sysfs (no libudev): every `/dev/hidraw*` node whose
//! HID device has Chessnut's vendor id and one of its board product ids, and whose report
//! descriptor opens the vendor-defined usage page 0xFF00. A Chessnut shows several HID
//! interfaces; only that one carries the board's protocol.

use std::fs;
use std::path::Path;

use super::kind_probe::CHESSNUT_VENDOR_ID;
use super::ports::class_devices;

/// The usage page of the interface that carries Chessnut's protocol.
pub const CHESSNUT_USAGE_PAGE: u16 = 0xFF00;

/// The board product ids, after masking the low byte: 0x8000, 0x8100 … 0x8600.
pub fn is_chessnut_product(product_id: u16) -> bool {
    (0x8000..=0x8600).contains(&(product_id & 0xFF00))
}

/// One Chessnut board's protocol interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HidBoard {
    /// The node to open, e.g. `/dev/hidraw3`.
    pub path: String,
    /// USB vendor id (0x2D80).
    pub vendor_id: u16,
    /// USB product id.
    pub product_id: u16,
    /// The device's name, if it gives one.
    pub name: Option<String>,
    /// The device's serial number, if it gives one.
    pub serial: Option<String>,
}

/// The Chessnut boards described under `sysfs_root` (normally `/sys`), sorted by node.
/// Node paths are reported under `/dev`.
pub fn list_chessnut_boards(sysfs_root: &Path) -> Vec<HidBoard> {
    let mut boards: Vec<HidBoard> = class_devices(sysfs_root, "hidraw")
        .filter_map(|(name, dir)| describe(&dir.join("device"), &name))
        .collect();
    boards.sort_by(|a, b| a.path.cmp(&b.path));
    boards
}

fn describe(device: &Path, node: &str) -> Option<HidBoard> {
    let uevent = fs::read_to_string(device.join("uevent")).ok()?;
    let field = |key: &str| {
        uevent
            .lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_string)
    };
    let (vendor_id, product_id) = hid_ids(&field("HID_ID")?)?;
    if vendor_id != CHESSNUT_VENDOR_ID || !is_chessnut_product(product_id) {
        return None;
    }
    let descriptor = fs::read(device.join("report_descriptor")).ok()?;
    if !usage_pages(&descriptor).contains(&CHESSNUT_USAGE_PAGE) {
        return None;
    }
    Some(HidBoard {
        path: format!("/dev/{node}"),
        vendor_id,
        product_id,
        name: field("HID_NAME"),
        serial: field("HID_UNIQ"),
    })
}

/// The vendor and product of a uevent `HID_ID` (`bus:vendor:product`, in hex).
fn hid_ids(hid_id: &str) -> Option<(u16, u16)> {
    let mut parts = hid_id.split(':').skip(1);
    let mut next = || u32::from_str_radix(parts.next()?, 16).ok()?.try_into().ok();
    Some((next()?, next()?))
}

/// Every usage page a HID report descriptor names (its global Usage Page items).
pub fn usage_pages(descriptor: &[u8]) -> Vec<u16> {
    const LONG_ITEM: u8 = 0xFE;
    const USAGE_PAGE: u8 = 0x04;
    let mut pages = Vec::new();
    let mut at = 0;
    while let Some(&prefix) = descriptor.get(at) {
        if prefix == LONG_ITEM {
            let size = descriptor.get(at + 1).map_or(0, |&s| usize::from(s));
            at += 3 + size;
            continue;
        }
        let size = match prefix & 3 {
            3 => 4,
            n => usize::from(n),
        };
        let data = descriptor.get(at + 1..at + 1 + size);
        if prefix & 0xFC == USAGE_PAGE
            && let Some(data) = data
        {
            let value = data
                .iter()
                .rev()
                .fold(0u32, |value, &byte| value << 8 | u32::from(byte));
            pages.push(value as u16);
        }
        at += 1 + size;
    }
    pages
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Report descriptors: a keyboard's (generic desktop page) and Chessnut's protocol
    /// interface (vendor page 0xFF00, 64-byte input and output reports).
    const KEYBOARD: &[u8] = &[0x05, 0x01, 0x09, 0x06, 0xA1, 0x01, 0x05, 0x07, 0xC0];
    const VENDOR_PAGE: &[u8] = &[
        0x06, 0x00, 0xFF, 0x09, 0x01, 0xA1, 0x01, 0x15, 0x00, 0x26, 0xFF, 0x00, 0x75, 0x08, 0x95,
        0x40, 0x09, 0x01, 0x81, 0x02, 0x95, 0x40, 0x09, 0x01, 0x91, 0x02, 0xC0,
    ];

    /// A miniature sysfs: a Chessnut with a keyboard-like and a protocol interface, a
    /// second Chessnut product, a Chessnut id outside the board range, a stranger's
    /// vendor-page device, and a node whose device has no uevent.
    fn fake_sysfs() -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("tempdir");
        let r = root.path();
        let class = r.join("class/hidraw");
        fs::create_dir_all(&class).expect("mkdir");
        let node = |node: &str, usb: &str, hid_id: &str, name: &str, descriptor: &[u8]| {
            let dev = r.join(format!("devices/pci0000:00/usb1/{usb}/{hid_id}.0001"));
            fs::create_dir_all(dev.join("hidraw").join(node)).expect("mkdir");
            let (vendor, product) = hid_id
                .split_once(':')
                .map(|(_, ids)| ids)
                .unwrap_or_default()
                .split_once(':')
                .unwrap_or_default();
            fs::write(
                dev.join("uevent"),
                format!(
                    "DRIVER=hid-generic\nHID_ID=0003:0000{vendor}:0000{product}\n\
                     HID_NAME={name}\nHID_PHYS=usb-0000:00:14.0-1/input0\nHID_UNIQ=\n"
                ),
            )
            .expect("write");
            fs::write(dev.join("report_descriptor"), descriptor).expect("write");
            let class_dir = dev.join("hidraw").join(node);
            symlink(&class_dir, class.join(node)).expect("symlink");
            symlink(&dev, class_dir.join("device")).expect("symlink");
        };
        node(
            "hidraw0",
            "1-1:1.0",
            "0003:2D80:8000",
            "Chessnut Air",
            KEYBOARD,
        );
        node(
            "hidraw1",
            "1-1:1.1",
            "0003:2D80:8000",
            "Chessnut Air",
            VENDOR_PAGE,
        );
        node(
            "hidraw4",
            "1-2:1.0",
            "0003:2D80:8603",
            "Chessnut Pro",
            VENDOR_PAGE,
        );
        node(
            "hidraw5",
            "1-3:1.0",
            "0003:2D80:9000",
            "Chessnut Other",
            VENDOR_PAGE,
        );
        node(
            "hidraw6",
            "1-4:1.0",
            "0003:046D:C52B",
            "USB Receiver",
            VENDOR_PAGE,
        );
        fs::create_dir_all(class.join("hidraw7/device")).expect("mkdir");
        root
    }

    #[test]
    fn lists_the_protocol_interface_of_each_chessnut_board_only() {
        let root = fake_sysfs();
        let boards = list_chessnut_boards(root.path());
        let paths: Vec<&str> = boards.iter().map(|b| b.path.as_str()).collect();
        assert_eq!(paths, ["/dev/hidraw1", "/dev/hidraw4"]);
        assert_eq!(
            (boards[0].vendor_id, boards[0].product_id),
            (0x2D80, 0x8000)
        );
        assert_eq!(boards[0].name.as_deref(), Some("Chessnut Air"));
        assert_eq!(boards[0].serial, None);
        assert_eq!(boards[1].product_id, 0x8603);
    }

    #[test]
    fn usage_pages_are_read_item_by_item() {
        assert_eq!(usage_pages(VENDOR_PAGE), [0xFF00]);
        assert_eq!(usage_pages(KEYBOARD), [0x0001, 0x0007]);
        // `06 00 FF` inside another item's data is not a usage page.
        assert!(usage_pages(&[0x27, 0x06, 0x00, 0xFF, 0x00]).is_empty());
        // A long item is stepped over; a cut descriptor never panics.
        assert_eq!(
            usage_pages(&[0xFE, 0x02, 0x10, 0x06, 0x00, 0x05, 0x0C]),
            [0x0C]
        );
        assert!(usage_pages(&[0x06, 0x00]).is_empty());
    }

    #[test]
    fn missing_sysfs_gives_no_boards() {
        assert!(list_chessnut_boards(Path::new("/nonexistent-sysfs")).is_empty());
    }

    #[test]
    fn board_product_ids_are_the_documented_range() {
        assert!(is_chessnut_product(0x8000) && is_chessnut_product(0x86FF));
        assert!(!is_chessnut_product(0x7FFF) && !is_chessnut_product(0x8700));
    }
}
