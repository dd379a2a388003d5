//! Bluetooth LE through BlueZ over D-Bus (the `btleplug` crate): the adapter, a scan that
//! recognises boards by their service, finding the board a `ble:` port names, and the
//! [`BlePeripheral`] the link drives. Every failure says what is missing: the system D-Bus,
//! the Bluetooth service, an adapter, or the board.

use std::sync::Arc;
use std::time::Duration;

use btleplug::api::{Central, CentralState};
use btleplug::api::{
    CentralEvent, CharPropFlags, Characteristic, Manager as _, Peripheral as _, ScanFilter,
    WriteType,
};
use btleplug::platform::{Adapter, Manager, Peripheral};
use futures_util::StreamExt;
use tokio::sync::{Mutex, mpsc};
use uuid::Uuid;

use super::ScannedBoard;
use super::peripheral::{BleError, BlePeripheral, FoundCharacteristic, Notification};
use super::stream::open_ble_stream;
use crate::driver::board_stream::{BoardStream, Connecting, Connector};
use crate::wire::gatt::{BleTarget, GattProfile, GattUuid, address_text, recognise};

/// How long a port's board is looked for before the link reports it missing.
const FIND_TIMEOUT: Duration = Duration::from_secs(10);

/// The first Bluetooth adapter, switched on; otherwise an error naming what is missing.
pub async fn first_adapter() -> Result<Adapter, BleError> {
    let manager = Manager::new().await.map_err(|e| {
        BleError(format!(
            "Bluetooth LE: no system D-Bus to reach BlueZ through ({e}); on Linux install \
             and start dbus and bluez (`sudo systemctl start bluetooth`)"
        ))
    })?;
    let adapters = manager.adapters().await.map_err(|e| {
        BleError(format!(
            "Bluetooth LE: the Bluetooth service (bluetoothd) does not answer on D-Bus ({e}); \
             install bluez and start it: `sudo systemctl start bluetooth`"
        ))
    })?;
    let Some(adapter) = adapters.into_iter().next() else {
        return Err(BleError(
            "Bluetooth LE: no Bluetooth adapter found; plug one in (or unblock it: `rfkill \
             unblock bluetooth`) and check with `bluetoothctl list`"
                .to_string(),
        ));
    };
    if let Ok(CentralState::PoweredOff) = adapter.adapter_state().await {
        return Err(BleError(
            "Bluetooth LE: the Bluetooth adapter is switched off; switch it on with \
             `bluetoothctl power on`"
                .to_string(),
        ));
    }
    Ok(adapter)
}

fn scan_error(e: btleplug::Error) -> BleError {
    BleError(format!(
        "Bluetooth LE: the adapter refused to scan ({e}); check it with `bluetoothctl show`"
    ))
}

/// What the adapter knows of a device now: address, name, advertised services, signal.
async fn advert(peripheral: &Peripheral) -> ([u8; 6], Option<String>, Vec<GattUuid>, Option<i16>) {
    let address = peripheral.address().into_inner();
    match peripheral.properties().await {
        Ok(Some(p)) => (
            address,
            p.local_name,
            p.services.iter().map(Uuid::as_u128).collect(),
            p.rssi,
        ),
        _ => (address, None, Vec::new(), None),
    }
}

/// Scans for `duration` and lists the boards recognised, by address.
pub async fn scan(duration: Duration) -> Result<Vec<ScannedBoard>, BleError> {
    let adapter = first_adapter().await?;
    adapter
        .start_scan(ScanFilter::default())
        .await
        .map_err(scan_error)?;
    tokio::time::sleep(duration).await;
    let peripherals = adapter.peripherals().await.map_err(scan_error)?;
    let _ = adapter.stop_scan().await;
    let mut boards = Vec::new();
    for peripheral in peripherals {
        let (address, name, services, rssi) = advert(&peripheral).await;
        if let Some((kind, recognition)) = recognise(name.as_deref(), &services) {
            boards.push(ScannedBoard {
                address,
                name,
                kind,
                recognition,
                rssi,
            });
        }
    }
    boards.sort_by_key(|b| b.address);
    Ok(boards)
}

/// Scans until the board `target` names (of `profile`'s kind) shows up, or `timeout`.
async fn find(
    target: &BleTarget,
    profile: &'static GattProfile,
    timeout: Duration,
) -> Result<BluezPeripheral, BleError> {
    let adapter = first_adapter().await?;
    adapter
        .start_scan(ScanFilter::default())
        .await
        .map_err(scan_error)?;
    let deadline = tokio::time::Instant::now() + timeout;
    let found = 'scan: loop {
        for peripheral in adapter.peripherals().await.map_err(scan_error)? {
            let (address, name, services, _) = advert(&peripheral).await;
            let of_kind =
                recognise(name.as_deref(), &services).is_some_and(|(kind, _)| kind == profile.kind);
            let wanted = match target {
                BleTarget::AnyOfKind => of_kind,
                _ => target.matches(address, name.as_deref()),
            };
            if wanted {
                let label = match &name {
                    Some(name) => format!("{} \"{name}\"", address_text(address)),
                    None => address_text(address),
                };
                break 'scan Some(BluezPeripheral {
                    peripheral,
                    adapter: adapter.clone(),
                    label: format!("ble:{label}"),
                });
            }
        }
        if tokio::time::Instant::now() >= deadline {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let _ = adapter.stop_scan().await;
    found.ok_or_else(|| {
        BleError(format!(
            "{target}: no such {} board in reach after {} s of scanning; switch it on, \
             close the maker's app (a board takes one connection) and check the address or \
             name with `touchmove ports --ble`",
            profile.kind,
            timeout.as_secs()
        ))
    })
}

/// A board reached through BlueZ.
#[derive(Debug)]
pub struct BluezPeripheral {
    peripheral: Peripheral,
    adapter: Adapter,
    label: String,
}

impl BluezPeripheral {
    fn error(&self, what: &str, e: btleplug::Error) -> BleError {
        BleError(format!("{}: {what} failed ({e})", self.label))
    }

    fn characteristic(&self, uuid: GattUuid) -> Result<Characteristic, BleError> {
        self.peripheral
            .characteristics()
            .into_iter()
            .find(|c| c.uuid.as_u128() == uuid)
            .ok_or_else(|| {
                BleError(format!(
                    "{}: no characteristic {}",
                    self.label,
                    crate::wire::gatt::uuid_text(uuid)
                ))
            })
    }
}

impl BlePeripheral for BluezPeripheral {
    fn describe(&self) -> String {
        self.label.clone()
    }

    async fn connect(&self) -> Result<(), BleError> {
        if !self.peripheral.is_connected().await.unwrap_or(false) {
            self.peripheral
                .connect()
                .await
                .map_err(|e| self.error("connecting", e))?;
        }
        Ok(())
    }

    async fn discover(&self) -> Result<Vec<FoundCharacteristic>, BleError> {
        // BlueZ may still be resolving the services just after connecting.
        for _ in 0..10 {
            self.peripheral
                .discover_services()
                .await
                .map_err(|e| self.error("reading the services", e))?;
            let found: Vec<FoundCharacteristic> = self
                .peripheral
                .characteristics()
                .into_iter()
                .map(|c| FoundCharacteristic {
                    service: c.service_uuid.as_u128(),
                    uuid: c.uuid.as_u128(),
                    notifies: c
                        .properties
                        .intersects(CharPropFlags::NOTIFY | CharPropFlags::INDICATE),
                    writable: c
                        .properties
                        .intersects(CharPropFlags::WRITE | CharPropFlags::WRITE_WITHOUT_RESPONSE),
                })
                .collect();
            if !found.is_empty() {
                return Ok(found);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Ok(Vec::new())
    }

    async fn notifications(&self) -> Result<mpsc::Receiver<Notification>, BleError> {
        let mut stream = self
            .peripheral
            .notifications()
            .await
            .map_err(|e| self.error("listening to notifications", e))?;
        let (sender, receiver) = mpsc::channel(256);
        tokio::spawn(async move {
            while let Some(n) = stream.next().await {
                let notification = Notification {
                    characteristic: n.uuid.as_u128(),
                    value: n.value,
                };
                if sender.send(notification).await.is_err() {
                    return;
                }
            }
        });
        Ok(receiver)
    }

    async fn subscribe(&self, characteristic: GattUuid) -> Result<(), BleError> {
        let c = self.characteristic(characteristic)?;
        self.peripheral
            .subscribe(&c)
            .await
            .map_err(|e| self.error("subscribing", e))
    }

    async fn write(&self, characteristic: GattUuid, bytes: &[u8]) -> Result<(), BleError> {
        let c = self.characteristic(characteristic)?;
        let write_type = if c.properties.contains(CharPropFlags::WRITE_WITHOUT_RESPONSE) {
            WriteType::WithoutResponse
        } else {
            WriteType::WithResponse
        };
        self.peripheral
            .write(&c, bytes, write_type)
            .await
            .map_err(|e| self.error("writing", e))
    }

    async fn disconnected(&self) -> String {
        let id = self.peripheral.id();
        let mut events = self.adapter.events().await.ok();
        let mut poll = tokio::time::interval(Duration::from_secs(2));
        loop {
            tokio::select! {
                event = async { events.as_mut()?.next().await }, if events.is_some() => match event {
                    Some(CentralEvent::DeviceDisconnected(gone)) if gone == id => {
                        return "the board disconnected (out of reach or switched off?)".into();
                    }
                    Some(_) => {}
                    None => events = None,
                },
                _ = poll.tick() => {
                    if let Ok(false) = self.peripheral.is_connected().await {
                        return "the board is no longer connected".into();
                    }
                }
            }
        }
    }

    async fn disconnect(&self) {
        let _ = self.peripheral.disconnect().await;
    }
}

/// The connector of a `ble:` port: finds the board at the first connection (and again after
/// a connection that failed), then connects to it at every reconnection.
#[derive(Debug)]
pub struct BluezConnector {
    target: BleTarget,
    profile: &'static GattProfile,
    found: Mutex<Option<Arc<BluezPeripheral>>>,
}

impl BluezConnector {
    /// The connector of the port that names `target`, a board of `profile`'s kind.
    pub fn new(target: BleTarget, profile: &'static GattProfile) -> Self {
        BluezConnector {
            target,
            profile,
            found: Mutex::new(None),
        }
    }
}

impl Connector for BluezConnector {
    fn connect(&self) -> Connecting<'_> {
        Box::pin(async move {
            let mut found = self.found.lock().await;
            let peripheral = match found.as_ref() {
                Some(p) => Arc::clone(p),
                None => {
                    let p = Arc::new(
                        find(&self.target, self.profile, FIND_TIMEOUT)
                            .await
                            .map_err(|e| e.to_string())?,
                    );
                    *found = Some(Arc::clone(&p));
                    p
                }
            };
            match open_ble_stream(peripheral, self.profile).await {
                Ok(stream) => Ok(Box::new(stream) as BoardStream),
                Err(e) => {
                    *found = None;
                    Err(e.to_string())
                }
            }
        })
    }
}
