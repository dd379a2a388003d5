//! Bluetooth LE boards (DGT Pegasus, Chessnut Air, Millennium's BLE module) as byte streams
//! for the links.
//!
//! [`peripheral`] is what a link needs of a BLE board, [`stream`] turns one into the byte
//! stream a link reads (both always built, and tested with `sim::virtual_peripheral`); the
//! BlueZ implementation, [`bluez`], comes with the `ble` feature. The GATT facts of each
//! kind are in `wire::gatt`.

pub mod peripheral;
pub mod stream;

#[cfg(feature = "ble")]
pub mod bluez;

use std::sync::Arc;
use std::time::Duration;

use crate::board::kind::BoardKind;
use crate::driver::board_stream::{Connecting, Connector};
use crate::wire::gatt::{BleTarget, HOW_TO_BUILD_WITH_BLE, Recognition, check_ble_port};

/// A board a scan found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedBoard {
    /// Its Bluetooth address.
    pub address: [u8; 6],
    /// Its advertised name.
    pub name: Option<String>,
    /// The kind its advertisement tells.
    pub kind: BoardKind,
    /// How sure that is.
    pub recognition: Recognition,
    /// Signal strength, dBm.
    pub rssi: Option<i16>,
}

/// Scans for `duration` and lists the boards in reach; an error names what is missing (the
/// `ble` feature, D-Bus, the Bluetooth service, an adapter).
pub async fn scan(duration: Duration) -> Result<Vec<ScannedBoard>, String> {
    #[cfg(feature = "ble")]
    {
        bluez::scan(duration).await.map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "ble"))]
    {
        let _ = duration;
        Err(format!("Bluetooth LE: {HOW_TO_BUILD_WITH_BLE}"))
    }
}

/// A link's connector for `port`, a `ble:` port naming `target`, a board of `kind`.
pub(crate) fn port_connector(port: &str, kind: BoardKind, target: BleTarget) -> Arc<dyn Connector> {
    if let Err(message) = check_ble_port(kind, port) {
        return Arc::new(Refused(message));
    }
    #[cfg(feature = "ble")]
    if let Some(profile) = crate::wire::gatt::profile_of(kind) {
        return Arc::new(bluez::BluezConnector::new(target, profile));
    }
    let _ = target;
    Arc::new(Refused(format!("{port}: {HOW_TO_BUILD_WITH_BLE}")))
}

/// A port that cannot be opened by this build or for this kind: every attempt says why.
#[derive(Debug)]
struct Refused(String);

impl Connector for Refused {
    fn connect(&self) -> Connecting<'_> {
        let message = self.0.clone();
        Box::pin(async move { Err(message) })
    }
}
