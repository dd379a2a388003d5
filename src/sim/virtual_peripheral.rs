//! A virtual Bluetooth LE board: the GATT side of a board of one kind, written from the
//! documents (`protocols` §1.15.4 Pegasus, §2.1 Millennium's BLE module, §2.3 Chessnut Air),
//! in front of a virtual board of that kind on a pseudo-terminal (`sim::virtual_pegasus`,
//! `sim::snapshot_board`), which plays the game.
//!
//! What it models of the radio side:
//! * its services and characteristics, and only those: a write elsewhere, or to a
//!   characteristic that does not take writes, fails;
//! * one write carries at most one ATT payload: 20 bytes on the Nordic and ISSC UARTs (the
//!   smallest MTU), 497 on a Chessnut (its MTU of about 500);
//! * the board's bytes as notifications on subscribed characteristics only: the UARTs cut
//!   them into fragments of 1 to 20 bytes wherever they fall (a Millennium reply arrives in
//!   pieces), a Chessnut sends each frame whole, its position frames (`01 …`) on the FEN
//!   characteristic and everything else on the operation service's;
//! * a lost connection ([`VirtualPeripheral::lose_connection`]): notifications stop, the
//!   host learns it through `disconnected`, and the board's bytes are lost until the host
//!   connects again; [`VirtualPeripheral::set_in_reach`] makes connecting fail meanwhile.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncReadExt, AsyncWriteExt, WriteHalf};
use tokio::sync::{mpsc, watch};
use tokio_serial::SerialStream;

use crate::board::kind::BoardKind;
use crate::driver::ble::peripheral::{BleError, BlePeripheral, FoundCharacteristic, Notification};
use crate::driver::serial;
use crate::wire::gatt::{
    CHESSNUT_FEN_NOTIFY, CHESSNUT_FEN_SERVICE, CHESSNUT_OPERATION_NOTIFY,
    CHESSNUT_OPERATION_SERVICE, CHESSNUT_OPERATION_WRITE, GattUuid, ISSC_UART_NOTIFY,
    ISSC_UART_SERVICE, ISSC_UART_WRITE, NORDIC_UART_NOTIFY, NORDIC_UART_SERVICE, NORDIC_UART_WRITE,
    uuid_text,
};

/// Fragment sizes the UART boards cut their bytes into, in turn.
const UART_FRAGMENTS: [usize; 7] = [20, 7, 1, 20, 13, 3, 20];

/// The characteristics of a board of `kind`: (service, characteristic, notifies, writable).
fn characteristics(kind: BoardKind) -> Vec<FoundCharacteristic> {
    let c = |service, uuid, notifies, writable| FoundCharacteristic {
        service,
        uuid,
        notifies,
        writable,
    };
    match kind {
        BoardKind::Pegasus => vec![
            c(NORDIC_UART_SERVICE, NORDIC_UART_WRITE, false, true),
            c(NORDIC_UART_SERVICE, NORDIC_UART_NOTIFY, true, false),
        ],
        BoardKind::Millennium => vec![
            c(ISSC_UART_SERVICE, ISSC_UART_NOTIFY, true, false),
            c(ISSC_UART_SERVICE, ISSC_UART_WRITE, false, true),
        ],
        BoardKind::Chessnut => vec![
            c(CHESSNUT_FEN_SERVICE, CHESSNUT_FEN_NOTIFY, true, false),
            c(
                CHESSNUT_OPERATION_SERVICE,
                CHESSNUT_OPERATION_WRITE,
                false,
                true,
            ),
            c(
                CHESSNUT_OPERATION_SERVICE,
                CHESSNUT_OPERATION_NOTIFY,
                true,
                false,
            ),
        ],
        _ => Vec::new(),
    }
}

/// The longest write the board takes at once.
fn max_write(kind: BoardKind) -> usize {
    match kind {
        BoardKind::Chessnut => 497,
        _ => 20,
    }
}

/// The connection as the board sees it.
#[derive(Debug, Default)]
struct State {
    in_reach: bool,
    /// The current connection: where its notifications go and how it learns its end.
    connection: Option<(mpsc::Sender<Notification>, watch::Sender<Option<String>>)>,
    subscribed: HashSet<GattUuid>,
    connections: u32,
    largest_write: usize,
    board_writer: Option<WriteHalf<SerialStream>>,
}

/// A virtual BLE board in front of the virtual board at `board_port`.
#[derive(Debug, Clone)]
pub struct VirtualPeripheral {
    kind: BoardKind,
    board_port: PathBuf,
    state: Arc<Mutex<State>>,
    /// The end of the current connection, for `disconnected`.
    ended: Arc<Mutex<watch::Receiver<Option<String>>>>,
}

impl VirtualPeripheral {
    /// A board of `kind` (Pegasus, Millennium or Chessnut) whose bytes come from the virtual
    /// board on the pseudo-terminal `board_port`; it opens the port at the first connection.
    pub fn new(kind: BoardKind, board_port: impl Into<PathBuf>) -> Self {
        let (_, ended) = watch::channel(None);
        VirtualPeripheral {
            kind,
            board_port: board_port.into(),
            state: Arc::new(Mutex::new(State {
                in_reach: true,
                ..State::default()
            })),
            ended: Arc::new(Mutex::new(ended)),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends the connection as a board out of reach does.
    pub fn lose_connection(&self, reason: &str) {
        let mut state = self.state();
        if let Some((_, end)) = state.connection.take() {
            let _ = end.send(Some(reason.to_string()));
        }
        state.subscribed.clear();
    }

    /// While false, connecting fails.
    pub fn set_in_reach(&self, in_reach: bool) {
        self.state().in_reach = in_reach;
    }

    /// Connections made so far.
    pub fn connections(&self) -> u32 {
        self.state().connections
    }

    /// The characteristics the host subscribed to in this connection.
    pub fn subscribed(&self) -> HashSet<GattUuid> {
        self.state().subscribed.clone()
    }

    /// The longest write the host made.
    pub fn largest_write(&self) -> usize {
        self.state().largest_write
    }

    /// Opens the board's port and starts carrying its bytes (once for the peripheral's
    /// life: the board plays on while no host is connected).
    fn open_board(&self) -> Result<(), BleError> {
        if self.state().board_writer.is_some() {
            return Ok(());
        }
        let path = self.board_port.to_string_lossy().into_owned();
        let port = serial::open_at(&path, 38_400).map_err(|e| BleError(e.to_string()))?;
        let (mut reader, writer) = tokio::io::split(port);
        self.state().board_writer = Some(writer);
        let state = Arc::clone(&self.state);
        let kind = self.kind;
        tokio::spawn(async move {
            let mut buf = [0u8; 512];
            let mut pending = Vec::new();
            let mut turn = 0usize;
            while let Ok(n) = reader.read(&mut buf).await {
                if n == 0 {
                    return;
                }
                pending.extend_from_slice(&buf[..n]);
                let notifications = match kind {
                    BoardKind::Chessnut => chessnut_frames(&mut pending),
                    _ => uart_fragments(&mut pending, &mut turn, kind),
                };
                let sender = {
                    let state = state.lock().unwrap_or_else(|e| e.into_inner());
                    state.connection.as_ref().map(|(s, _)| s.clone()).map(|s| {
                        let wanted: Vec<Notification> = notifications
                            .into_iter()
                            .filter(|n| state.subscribed.contains(&n.characteristic))
                            .collect();
                        (s, wanted)
                    })
                };
                if let Some((sender, wanted)) = sender {
                    for notification in wanted {
                        let _ = sender.send(notification).await;
                    }
                }
            }
        });
        Ok(())
    }
}

/// A UART board's bytes as notifications of 1 to 20 bytes.
fn uart_fragments(pending: &mut Vec<u8>, turn: &mut usize, kind: BoardKind) -> Vec<Notification> {
    let characteristic = match kind {
        BoardKind::Pegasus => NORDIC_UART_NOTIFY,
        _ => ISSC_UART_NOTIFY,
    };
    let mut out = Vec::new();
    while !pending.is_empty() {
        let size = UART_FRAGMENTS[*turn % UART_FRAGMENTS.len()].min(pending.len());
        *turn += 1;
        out.push(Notification {
            characteristic,
            value: pending.drain(..size).collect(),
        });
    }
    out
}

/// A Chessnut's whole frames (`cmd len …`), each a notification on its characteristic.
fn chessnut_frames(pending: &mut Vec<u8>) -> Vec<Notification> {
    let mut out = Vec::new();
    while pending.len() >= 2 && pending.len() >= usize::from(pending[1]) + 2 {
        let frame: Vec<u8> = pending.drain(..usize::from(pending[1]) + 2).collect();
        let characteristic = if frame[0] == 0x01 {
            CHESSNUT_FEN_NOTIFY
        } else {
            CHESSNUT_OPERATION_NOTIFY
        };
        out.push(Notification {
            characteristic,
            value: frame,
        });
    }
    out
}

impl BlePeripheral for VirtualPeripheral {
    fn describe(&self) -> String {
        format!("ble:virtual {}", self.kind)
    }

    async fn connect(&self) -> Result<(), BleError> {
        if !self.state().in_reach {
            return Err(BleError(format!(
                "{}: connecting failed (out of reach)",
                self.describe()
            )));
        }
        self.open_board()?;
        let mut state = self.state();
        if state.connection.is_none() {
            let (sender, _) = mpsc::channel(1);
            let (end, ended) = watch::channel(None);
            state.connection = Some((sender, end));
            state.connections += 1;
            *self.ended.lock().unwrap_or_else(|e| e.into_inner()) = ended;
        }
        Ok(())
    }

    async fn discover(&self) -> Result<Vec<FoundCharacteristic>, BleError> {
        match self.state().connection {
            Some(_) => Ok(characteristics(self.kind)),
            None => Err(BleError(format!("{}: not connected", self.describe()))),
        }
    }

    async fn notifications(&self) -> Result<mpsc::Receiver<Notification>, BleError> {
        let (sender, receiver) = mpsc::channel(256);
        match self.state().connection.as_mut() {
            Some((slot, _)) => *slot = sender,
            None => return Err(BleError(format!("{}: not connected", self.describe()))),
        }
        Ok(receiver)
    }

    async fn subscribe(&self, characteristic: GattUuid) -> Result<(), BleError> {
        let notifies = characteristics(self.kind)
            .iter()
            .any(|c| c.uuid == characteristic && c.notifies);
        let mut state = self.state();
        if state.connection.is_none() || !notifies {
            return Err(BleError(format!(
                "{}: cannot subscribe to {}",
                self.describe(),
                uuid_text(characteristic)
            )));
        }
        state.subscribed.insert(characteristic);
        Ok(())
    }

    async fn write(&self, characteristic: GattUuid, bytes: &[u8]) -> Result<(), BleError> {
        let writable = characteristics(self.kind)
            .iter()
            .any(|c| c.uuid == characteristic && c.writable);
        let mut writer = {
            let mut state = self.state();
            if state.connection.is_none() {
                return Err(BleError(format!("{}: not connected", self.describe())));
            }
            if !writable || bytes.len() > max_write(self.kind) {
                return Err(BleError(format!(
                    "{}: a write of {} bytes to {} is refused",
                    self.describe(),
                    bytes.len(),
                    uuid_text(characteristic)
                )));
            }
            state.largest_write = state.largest_write.max(bytes.len());
            state.board_writer.take()
        };
        let written = match writer.as_mut() {
            Some(w) => w.write_all(bytes).await.is_ok(),
            None => false,
        };
        self.state().board_writer = writer;
        if written {
            Ok(())
        } else {
            Err(BleError(format!("{}: the board is gone", self.describe())))
        }
    }

    async fn disconnected(&self) -> String {
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match ended.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            Err(_) => "the peripheral is gone".to_string(),
        }
    }

    async fn disconnect(&self) {
        self.lose_connection("the host disconnected");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uart_bytes_are_cut_into_fragments_of_at_most_twenty() {
        let mut pending: Vec<u8> = (0..67).collect();
        let mut turn = 0;
        let fragments = uart_fragments(&mut pending, &mut turn, BoardKind::Millennium);
        let sizes: Vec<usize> = fragments.iter().map(|n| n.value.len()).collect();
        assert_eq!(sizes, [20, 7, 1, 20, 13, 3, 3]);
        let joined: Vec<u8> = fragments.into_iter().flat_map(|n| n.value).collect();
        assert_eq!(joined, (0..67).collect::<Vec<u8>>());
    }

    #[test]
    fn chessnut_frames_go_whole_to_their_characteristics() {
        let mut pending = vec![0x23, 0x01, 0x00, 0x01, 0x02, 0xAA, 0xBB, 0x2A, 0x02];
        let frames = chessnut_frames(&mut pending);
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].characteristic, CHESSNUT_OPERATION_NOTIFY);
        assert_eq!(frames[1].characteristic, CHESSNUT_FEN_NOTIFY);
        assert_eq!(frames[1].value, [0x01, 0x02, 0xAA, 0xBB]);
        assert_eq!(
            pending,
            [0x2A, 0x02],
            "the battery frame waits for its bytes"
        );
    }
}
