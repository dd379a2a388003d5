//! The local arbiter channel: a Unix socket in the event's state directory (`OUT.state`, see
//! [`super::layout::state_dir`]), authenticated by a token file only the recorder's user can
//! read.
//!
//! `OUT.state/arbiter.sock` (mode 0600) accepts connections; `OUT.state/arbiter.token` (mode
//! 0600) holds the token. A client sends one JSON line `{"token": "…", "request":
//! ArbiterRequest}` of at most [`MAX_REQUEST_BYTES`] within [`REQUEST_TIMEOUT`] and reads
//! one JSON line back: `{"ok": true, "message": "…"}` or `{"ok": false, "message": "why"}`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::record::arbiter::ArbiterRequest;

/// Where arbiter requests go: the request and a reply channel (`Ok(message)` when applied,
/// `Err(why)` when refused). The web API's arbiter endpoint uses the same type.
pub type ArbiterSink = mpsc::Sender<(ArbiterRequest, oneshot::Sender<Result<String, String>>)>;

/// The socket's file name in the state directory.
pub const SOCKET_NAME: &str = "arbiter.sock";
/// The token file's name in the state directory.
pub const TOKEN_NAME: &str = "arbiter.token";

/// The longest request line accepted (arbiter requests are small JSON objects).
pub const MAX_REQUEST_BYTES: u64 = 64 * 1024;

/// How long a client may take to send its request line.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Serialize, Deserialize)]
struct Envelope {
    token: String,
    request: ArbiterRequest,
}

#[derive(Serialize, Deserialize)]
struct Reply {
    ok: bool,
    message: String,
}

/// The event's token: the one in `STATE/arbiter.token` when it holds one, so that the
/// arbiter's desk keeps it from round to round and across restarts; else a fresh one, written
/// there with mode 0600.
pub fn event_token(state_dir: &Path) -> std::io::Result<String> {
    match std::fs::read_to_string(state_dir.join(TOKEN_NAME)) {
        Ok(token) if is_token(token.trim()) => Ok(token.trim().to_string()),
        _ => create_token(state_dir),
    }
}

/// True for what [`create_token`] makes: 48 hexadecimal digits.
fn is_token(text: &str) -> bool {
    text.len() == 48 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Creates a fresh token and writes it to `STATE/arbiter.token` with mode 0600.
pub fn create_token(state_dir: &Path) -> std::io::Result<String> {
    use rand::RngCore;
    let mut raw = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut raw);
    let token: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    write_token(state_dir, &token)?;
    Ok(token)
}

/// Writes `token` to `STATE/arbiter.token` with mode 0600.
pub fn write_token(state_dir: &Path, token: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = state_dir.join(TOKEN_NAME);
    let _ = std::fs::remove_file(&path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    file.write_all(token.as_bytes())?;
    file.sync_all()
}

/// Listens on `STATE/arbiter.sock` (mode 0600) and forwards authenticated requests to `sink`
/// until the task is aborted. Returns the listening task. The caller holds the state
/// directory's lock, so the socket it replaces is a dead recorder's.
pub fn listen(
    state_dir: &Path,
    token: String,
    sink: ArbiterSink,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    use std::os::unix::fs::PermissionsExt;
    let path = state_dir.join(SOCKET_NAME);
    let _ = std::fs::remove_file(&path);
    let listener = tokio::net::UnixListener::bind(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok(tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let token = token.clone();
            let sink = sink.clone();
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut line = String::new();
                let mut reader = tokio::io::BufReader::new(read.take(MAX_REQUEST_BYTES + 1));
                let reply = match tokio::time::timeout(REQUEST_TIMEOUT, reader.read_line(&mut line))
                    .await
                {
                    Err(_) => Reply {
                        ok: false,
                        message: format!("no request line within {} s", REQUEST_TIMEOUT.as_secs()),
                    },
                    Ok(Err(_)) => return,
                    Ok(Ok(_)) if line.len() as u64 > MAX_REQUEST_BYTES => Reply {
                        ok: false,
                        message: format!("request longer than {MAX_REQUEST_BYTES} bytes: refused"),
                    },
                    Ok(Ok(_)) => answer(&line, &token, &sink).await,
                };
                let mut text = serde_json::to_string(&reply).unwrap_or_default();
                text.push('\n');
                let _ = write.write_all(text.as_bytes()).await;
            });
        }
    }))
}

async fn answer(line: &str, token: &str, sink: &ArbiterSink) -> Reply {
    let refuse = |message: String| Reply { ok: false, message };
    let envelope: Envelope = match serde_json::from_str(line) {
        Ok(e) => e,
        Err(e) => return refuse(format!("malformed request: {e}")),
    };
    if envelope.token != token {
        return refuse(format!(
            "wrong token: read it from {TOKEN_NAME} in the recorder's state directory (OUT.state)"
        ));
    }
    let (tx, rx) = oneshot::channel();
    if sink.send((envelope.request, tx)).await.is_err() {
        return refuse("the recorder is shutting down".to_string());
    }
    match rx.await {
        Ok(Ok(message)) => Reply { ok: true, message },
        Ok(Err(message)) => refuse(message),
        Err(_) => refuse("the recorder dropped the request".to_string()),
    }
}

/// Sends one request to the recorder writing into `out_dir` (blocking), returning its answer.
/// The token and socket are in the state directory beside `out_dir`.
pub fn send(out_dir: &Path, request: &ArbiterRequest) -> Result<String, String> {
    let state = super::layout::state_dir(out_dir);
    let token_path: PathBuf = state.join(TOKEN_NAME);
    let token = std::fs::read_to_string(&token_path).map_err(|e| {
        format!(
            "cannot read {}: {e} (is `touchmove record` running with --out {}?)",
            token_path.display(),
            out_dir.display()
        )
    })?;
    let socket = state.join(SOCKET_NAME);
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).map_err(|e| {
        format!(
            "cannot connect to {}: {e} (is `touchmove record` running?)",
            socket.display()
        )
    })?;
    let envelope = Envelope {
        token: token.trim().to_string(),
        request: request.clone(),
    };
    let mut text = serde_json::to_string(&envelope).map_err(|e| e.to_string())?;
    text.push('\n');
    stream
        .write_all(text.as_bytes())
        .map_err(|e| format!("cannot send to the recorder: {e}"))?;
    let mut line = String::new();
    BufReader::new(stream)
        .read_line(&mut line)
        .map_err(|e| format!("no answer from the recorder: {e}"))?;
    let reply: Reply =
        serde_json::from_str(&line).map_err(|e| format!("unreadable answer {line:?}: {e}"))?;
    if reply.ok {
        Ok(reply.message)
    } else {
        Err(reply.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::arbiter::ArbiterAction;

    #[tokio::test]
    async fn authenticated_requests_reach_the_sink() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let state = crate::recorder::layout::state_dir(&out);
        crate::recorder::layout::prepare_state_dir(&state).unwrap();
        let token = create_token(&state).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state.join(TOKEN_NAME)), 0o600);
        assert_eq!(mode(&state), 0o700);
        let (tx, mut rx) = mpsc::channel(4);
        let task = listen(&state, token, tx).unwrap();
        assert_eq!(mode(&state.join(SOCKET_NAME)), 0o600);
        tokio::spawn(async move {
            while let Some((req, reply)) = rx.recv().await {
                let req: ArbiterRequest = req;
                let _ = reply.send(Ok(format!("board {} by {}", req.board, req.who)));
            }
        });
        let request = ArbiterRequest {
            who: "anna".into(),
            board: 3,
            action: ArbiterAction::NewGame,
            key: None,
        };
        let path = out.clone();
        let r = request.clone();
        let answer = tokio::task::spawn_blocking(move || send(&path, &r))
            .await
            .unwrap();
        assert_eq!(answer.unwrap(), "board 3 by anna");
        std::fs::write(state.join(TOKEN_NAME), "forged").unwrap();
        let path = out.clone();
        let answer = tokio::task::spawn_blocking(move || send(&path, &request))
            .await
            .unwrap();
        assert!(answer.unwrap_err().contains("wrong token"));
        task.abort();
    }
}
