//! The Bluetooth LE side of the boards that speak it (`protocols` §1.15.4, §2.1, §2.3): which
//! GATT service tells the board, which characteristics carry its bytes, how long one write may
//! be; and the `ble:` port names that pick a board. Facts and parsing only, no I/O.
//!
//! Each board's bytes over BLE are the bytes of its serial protocol: the board notifies them
//! on one characteristic (Chessnut: two, its position frames on one, the answers to commands
//! on the other) and takes the host's on a write characteristic.

use std::fmt;

use super::kind::BoardKind;

/// A 128-bit GATT UUID, as a number (`0x6e400001_b5a3_…`).
pub type GattUuid = u128;

/// Nordic UART service, which the DGT Pegasus uses.
pub const NORDIC_UART_SERVICE: GattUuid = 0x6e400001_b5a3_f393_e0a9_e50e24dcca9e;
/// Nordic UART: the host writes here.
pub const NORDIC_UART_WRITE: GattUuid = 0x6e400002_b5a3_f393_e0a9_e50e24dcca9e;
/// Nordic UART: the board notifies here.
pub const NORDIC_UART_NOTIFY: GattUuid = 0x6e400003_b5a3_f393_e0a9_e50e24dcca9e;

/// Microchip/ISSC transparent UART service of Millennium's ChessLink BLE module.
pub const ISSC_UART_SERVICE: GattUuid = 0x49535343_fe7d_4ae5_8fa9_9fafd205e455;
/// ISSC transparent UART: the board notifies here, in fragments.
pub const ISSC_UART_NOTIFY: GattUuid = 0x49535343_1e4d_4bd9_ba61_23c647249616;
/// ISSC transparent UART: the host writes here.
pub const ISSC_UART_WRITE: GattUuid = 0x49535343_8841_43f4_a8d4_ecbe34729bb3;

/// Chessnut's FEN service: its characteristic notifies the position frames.
pub const CHESSNUT_FEN_SERVICE: GattUuid = 0x1b7e8261_2877_41c3_b46e_cf057c562023;
/// Chessnut: position frames (`01 24 …`).
pub const CHESSNUT_FEN_NOTIFY: GattUuid = 0x1b7e8262_2877_41c3_b46e_cf057c562023;
/// Chessnut's operation service: commands and their answers.
pub const CHESSNUT_OPERATION_SERVICE: GattUuid = 0x1b7e8271_2877_41c3_b46e_cf057c562023;
/// Chessnut: the host writes its commands here.
pub const CHESSNUT_OPERATION_WRITE: GattUuid = 0x1b7e8272_2877_41c3_b46e_cf057c562023;
/// Chessnut: answers to commands (mode acknowledgement, battery).
pub const CHESSNUT_OPERATION_NOTIFY: GattUuid = 0x1b7e8273_2877_41c3_b46e_cf057c562023;

/// The payload of one write in the smallest ATT MTU (23 bytes less the 3-byte header): what
/// every BLE link carries without negotiation.
pub const SMALLEST_WRITE: usize = 20;

/// How one kind of board speaks over Bluetooth LE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GattProfile {
    /// The kind of board.
    pub kind: BoardKind,
    /// The services the board must have; the first one tells the kind in a scan.
    pub services: &'static [GattUuid],
    /// The characteristics to subscribe to; their notifications, in arrival order, are the
    /// board's byte stream.
    pub notify: &'static [GattUuid],
    /// The characteristic the host's bytes are written to.
    pub write: GattUuid,
    /// The most bytes written at once; longer commands are cut into pieces this long.
    pub write_chunk: usize,
    /// How the board names itself out of the box (the start of the advertised name).
    pub factory_name: &'static str,
}

/// DGT Pegasus: Nordic UART, DGT framing in both directions. The name can be changed in
/// DGT's app, so a scan goes by the service.
pub const PEGASUS: GattProfile = GattProfile {
    kind: BoardKind::Pegasus,
    services: &[NORDIC_UART_SERVICE],
    notify: &[NORDIC_UART_NOTIFY],
    write: NORDIC_UART_WRITE,
    write_chunk: SMALLEST_WRITE,
    factory_name: "DGT_PEGASUS",
};

/// Millennium ChessLink's BLE module: the serial protocol over a transparent UART, its
/// replies notified in fragments that the decoder puts together.
pub const MILLENNIUM: GattProfile = GattProfile {
    kind: BoardKind::Millennium,
    services: &[ISSC_UART_SERVICE],
    notify: &[ISSC_UART_NOTIFY],
    write: ISSC_UART_WRITE,
    write_chunk: SMALLEST_WRITE,
    factory_name: "MILLENNIUM CHESS",
};

/// Chessnut Air: position frames on the FEN characteristic, command answers on the
/// operation service's; its commands (at most 35 bytes) each fit one write once the MTU is
/// raised towards 500, which the board needs anyway for whole frames.
pub const CHESSNUT: GattProfile = GattProfile {
    kind: BoardKind::Chessnut,
    services: &[CHESSNUT_FEN_SERVICE, CHESSNUT_OPERATION_SERVICE],
    notify: &[CHESSNUT_FEN_NOTIFY, CHESSNUT_OPERATION_NOTIFY],
    write: CHESSNUT_OPERATION_WRITE,
    write_chunk: 64,
    factory_name: "Chessnut",
};

/// Every board kind that speaks Bluetooth LE.
pub const PROFILES: [GattProfile; 3] = [PEGASUS, MILLENNIUM, CHESSNUT];

/// The BLE profile of `kind`, if it has one.
pub fn profile_of(kind: BoardKind) -> Option<&'static GattProfile> {
    PROFILES.iter().find(|p| p.kind == kind)
}

/// The kinds that speak Bluetooth LE, for messages: "pegasus, millennium, chessnut".
pub fn ble_kind_names() -> String {
    PROFILES
        .iter()
        .map(|p| p.kind.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `uuid` written the usual way, `6e400001-b5a3-f393-e0a9-e50e24dcca9e`.
pub fn uuid_text(uuid: GattUuid) -> String {
    let hex = format!("{uuid:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// How sure a scan is of a board's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recognition {
    /// Its service and its factory name both tell the kind.
    Sure,
    /// Its service tells the kind, but other boards have the same service (Square Off and
    /// iChessOne use Nordic UART too), or the name was changed.
    ByService,
    /// Only its name tells (the board does not advertise its service).
    ByName,
}

/// The kind of board an advertisement shows, from its services and name.
pub fn recognise(name: Option<&str>, services: &[GattUuid]) -> Option<(BoardKind, Recognition)> {
    let named = |p: &GattProfile| {
        name.is_some_and(|n| {
            n.to_ascii_lowercase()
                .starts_with(&p.factory_name.to_ascii_lowercase())
        })
    };
    let by_service = PROFILES.iter().find(|p| services.contains(&p.services[0]));
    if let Some(p) = by_service {
        let sure = named(p) || p.services[0] != NORDIC_UART_SERVICE;
        let how = if sure {
            Recognition::Sure
        } else {
            Recognition::ByService
        };
        return Some((p.kind, how));
    }
    PROFILES
        .iter()
        .find(|p| named(p))
        .map(|p| (p.kind, Recognition::ByName))
}

/// The prefix of a port that names a Bluetooth LE board: `ble:ADDRESS-OR-NAME`.
pub const BLE_PORT_PREFIX: &str = "ble:";

/// Which board a `ble:` port names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BleTarget {
    /// A Bluetooth address, `AA:BB:CC:DD:EE:FF`.
    Address([u8; 6]),
    /// An advertised name, or its beginning, in any case.
    Name(String),
    /// `ble:` alone: the first board that offers the kind's service.
    AnyOfKind,
}

impl BleTarget {
    /// The target a port names, if it is a `ble:` port.
    pub fn of_port(port: &str) -> Option<BleTarget> {
        let rest = port.strip_prefix(BLE_PORT_PREFIX)?.trim();
        if rest.is_empty() {
            return Some(BleTarget::AnyOfKind);
        }
        Some(match parse_address(rest) {
            Some(address) => BleTarget::Address(address),
            None => BleTarget::Name(rest.to_string()),
        })
    }

    /// Whether a board seen with `address` and `name` is this target.
    pub fn matches(&self, address: [u8; 6], name: Option<&str>) -> bool {
        match self {
            BleTarget::Address(wanted) => *wanted == address,
            BleTarget::Name(wanted) => name.is_some_and(|n| {
                n.to_ascii_lowercase()
                    .starts_with(&wanted.to_ascii_lowercase())
            }),
            BleTarget::AnyOfKind => true,
        }
    }
}

impl fmt::Display for BleTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BleTarget::Address(a) => write!(f, "{BLE_PORT_PREFIX}{}", address_text(*a)),
            BleTarget::Name(n) => write!(f, "{BLE_PORT_PREFIX}{n}"),
            BleTarget::AnyOfKind => f.write_str(BLE_PORT_PREFIX),
        }
    }
}

/// `AA:BB:CC:DD:EE:FF` (or with dashes) as six bytes.
fn parse_address(text: &str) -> Option<[u8; 6]> {
    let parts: Vec<&str> = text.split([':', '-']).collect();
    if parts.len() != 6 {
        return None;
    }
    let mut address = [0u8; 6];
    for (slot, part) in address.iter_mut().zip(&parts) {
        if part.len() != 2 {
            return None;
        }
        *slot = u8::from_str_radix(part, 16).ok()?;
    }
    Some(address)
}

/// Six bytes as `AA:BB:CC:DD:EE:FF`.
pub fn address_text(address: [u8; 6]) -> String {
    address
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// How to get a touchmove that opens `ble:` ports, for messages of one built without.
pub const HOW_TO_BUILD_WITH_BLE: &str = "this touchmove was built without Bluetooth LE; \
     build it with the `ble` feature (`cargo install --path . --features ble`, which needs \
     the packages libdbus-1-dev and pkg-config) and run it again";

/// Checks a board's `port` against its `kind` when it names a Bluetooth LE board: the kind
/// must speak BLE, and this build must open BLE ports. `Ok` for every other port.
pub fn check_ble_port(kind: BoardKind, port: &str) -> Result<(), String> {
    if BleTarget::of_port(port).is_none() {
        return Ok(());
    }
    if profile_of(kind).is_none() {
        return Err(format!(
            "{port}: a {kind} board has no Bluetooth LE link (boards that have one: {}); \
             DGT's Bluetooth boards are classic Bluetooth serial ports such as /dev/rfcomm0",
            ble_kind_names()
        ));
    }
    if cfg!(feature = "ble") {
        Ok(())
    } else {
        Err(format!("{port}: {HOW_TO_BUILD_WITH_BLE}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_read_as_the_documents_write_them() {
        assert_eq!(
            uuid_text(NORDIC_UART_SERVICE),
            "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
        );
        assert_eq!(
            uuid_text(ISSC_UART_WRITE),
            "49535343-8841-43f4-a8d4-ecbe34729bb3"
        );
        assert_eq!(
            uuid_text(CHESSNUT_OPERATION_NOTIFY),
            "1b7e8273-2877-41c3-b46e-cf057c562023"
        );
    }

    #[test]
    fn ble_ports_name_an_address_a_name_or_any_board() {
        assert_eq!(
            BleTarget::of_port("ble:c4:DE:e2:01:02:0F"),
            Some(BleTarget::Address([0xC4, 0xDE, 0xE2, 0x01, 0x02, 0x0F]))
        );
        assert_eq!(
            BleTarget::of_port("ble:MILLENNIUM CHESS"),
            Some(BleTarget::Name("MILLENNIUM CHESS".into()))
        );
        assert_eq!(BleTarget::of_port("ble:"), Some(BleTarget::AnyOfKind));
        assert_eq!(BleTarget::of_port("/dev/ttyUSB0"), None);
        // Five parts or a non-hex part is a name.
        assert_eq!(
            BleTarget::of_port("ble:AA:BB:CC:DD:EE"),
            Some(BleTarget::Name("AA:BB:CC:DD:EE".into()))
        );
        let name = BleTarget::Name("dgt_pegasus".into());
        assert!(name.matches([0; 6], Some("DGT_PEGASUS_12345")));
        assert!(!name.matches([0; 6], Some("Chessnut Air")));
        assert!(!name.matches([0; 6], None));
        let address = BleTarget::of_port("ble:01:02:03:04:05:06").unwrap();
        assert!(address.matches([1, 2, 3, 4, 5, 6], None));
        assert!(!address.matches([1, 2, 3, 4, 5, 7], None));
        assert_eq!(address.to_string(), "ble:01:02:03:04:05:06");
    }

    #[test]
    fn scans_recognise_boards_by_service_and_name() {
        assert_eq!(
            recognise(Some("DGT_PEGASUS_20412"), &[NORDIC_UART_SERVICE]),
            Some((BoardKind::Pegasus, Recognition::Sure))
        );
        assert_eq!(
            recognise(Some("Board of Anna"), &[NORDIC_UART_SERVICE]),
            Some((BoardKind::Pegasus, Recognition::ByService))
        );
        assert_eq!(
            recognise(None, &[0x1234, CHESSNUT_FEN_SERVICE]),
            Some((BoardKind::Chessnut, Recognition::Sure))
        );
        assert_eq!(
            recognise(Some("MILLENNIUM CHESS"), &[]),
            Some((BoardKind::Millennium, Recognition::ByName))
        );
        assert_eq!(recognise(Some("Headphones"), &[0x180F]), None);
    }

    #[test]
    fn a_ble_port_needs_a_kind_that_speaks_ble() {
        let e = check_ble_port(BoardKind::Dgt, "ble:AA:BB:CC:DD:EE:FF").unwrap_err();
        assert!(e.contains("pegasus, millennium, chessnut"), "{e}");
        assert!(e.contains("/dev/rfcomm0"), "{e}");
        assert!(check_ble_port(BoardKind::Dgt, "/dev/ttyACM0").is_ok());
        let pegasus = check_ble_port(BoardKind::Pegasus, "ble:DGT_PEGASUS");
        if cfg!(feature = "ble") {
            assert!(pegasus.is_ok());
        } else {
            assert!(pegasus.unwrap_err().contains("--features ble"));
        }
    }
}
