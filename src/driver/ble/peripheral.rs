//! What the link needs of a Bluetooth LE board, whatever library reaches it: connect, find
//! its characteristics, subscribe, take its notifications, write, and learn when the
//! connection is lost. The BlueZ implementation is [`super::bluez`] (feature `ble`); the
//! tests' virtual peripheral is `sim::virtual_peripheral`.

use std::future::Future;

use tokio::sync::mpsc;

use crate::wire::gatt::GattUuid;

/// One notification: the characteristic that sent it and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The characteristic.
    pub characteristic: GattUuid,
    /// The bytes it carried.
    pub value: Vec<u8>,
}

/// A characteristic found on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoundCharacteristic {
    /// The service it belongs to.
    pub service: GattUuid,
    /// The characteristic.
    pub uuid: GattUuid,
    /// It can notify.
    pub notifies: bool,
    /// It can be written to (with or without response).
    pub writable: bool,
}

/// A failed Bluetooth LE operation: what failed and why, naming the board.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BleError(pub String);

/// A Bluetooth LE board as the link drives it. One value serves every connection: after a
/// loss the link calls [`connect`](Self::connect) again.
pub trait BlePeripheral: Send + Sync + 'static {
    /// How messages name the board (its address and name).
    fn describe(&self) -> String;

    /// Opens the connection.
    fn connect(&self) -> impl Future<Output = Result<(), BleError>> + Send;

    /// Finds the board's services and characteristics.
    fn discover(&self) -> impl Future<Output = Result<Vec<FoundCharacteristic>, BleError>> + Send;

    /// The notifications of every subscribed characteristic, in arrival order, for this
    /// connection; the channel closes when the connection ends.
    fn notifications(
        &self,
    ) -> impl Future<Output = Result<mpsc::Receiver<Notification>, BleError>> + Send;

    /// Asks `characteristic` to notify.
    fn subscribe(
        &self,
        characteristic: GattUuid,
    ) -> impl Future<Output = Result<(), BleError>> + Send;

    /// Writes `bytes` (at most one write's worth) to `characteristic`.
    fn write(
        &self,
        characteristic: GattUuid,
        bytes: &[u8],
    ) -> impl Future<Output = Result<(), BleError>> + Send;

    /// Resolves, with the reason, when the connection is lost.
    fn disconnected(&self) -> impl Future<Output = String> + Send;

    /// Closes the connection (the link is done with it).
    fn disconnect(&self) -> impl Future<Output = ()> + Send;
}
