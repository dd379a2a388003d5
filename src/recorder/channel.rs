//! The local arbiter channel: a Unix socket in the output folder, authenticated by a token
//! file only the recorder's user can read.
//!
//! `OUT/arbiter.sock` accepts connections; `OUT/arbiter.token` (mode 0600) holds the token.
//! A client sends one JSON line `{"token": "…", "request": ArbiterRequest}` and reads one JSON
//! line back: `{"ok": true, "message": "…"}` or `{"ok": false, "message": "why"}`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::record::arbiter::ArbiterRequest;

/// Where arbiter requests go: the request and a reply channel (`Ok(message)` when applied,
/// `Err(why)` when refused). The web API's arbiter endpoint uses the same type.
pub type ArbiterSink = mpsc::Sender<(ArbiterRequest, oneshot::Sender<Result<String, String>>)>;

/// The socket's file name in the output folder.
pub const SOCKET_NAME: &str = "arbiter.sock";
/// The token file's name in the output folder.
pub const TOKEN_NAME: &str = "arbiter.token";

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

/// Creates a fresh token and writes it to `OUT/arbiter.token` with mode 0600.
pub fn create_token(out_dir: &Path) -> std::io::Result<String> {
    use rand::RngCore;
    let mut raw = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut raw);
    let token: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    write_token(out_dir, &token)?;
    Ok(token)
}

/// Writes `token` to `OUT/arbiter.token` with mode 0600 (a recorder starting the next round
/// keeps the token the arbiter's desk already holds).
pub fn write_token(out_dir: &Path, token: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = out_dir.join(TOKEN_NAME);
    let _ = std::fs::remove_file(&path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    file.write_all(token.as_bytes())?;
    file.sync_all()
}

/// Listens on `OUT/arbiter.sock` and forwards authenticated requests to `sink` until the task
/// is aborted. Returns the listening task.
pub fn listen(
    out_dir: &Path,
    token: String,
    sink: ArbiterSink,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let path = out_dir.join(SOCKET_NAME);
    let _ = std::fs::remove_file(&path);
    let listener = tokio::net::UnixListener::bind(&path)?;
    Ok(tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let token = token.clone();
            let sink = sink.clone();
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut line = String::new();
                let mut reader = tokio::io::BufReader::new(read);
                if reader.read_line(&mut line).await.is_err() {
                    return;
                }
                let reply = answer(&line, &token, &sink).await;
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
            "wrong token: read it from {TOKEN_NAME} in the recorder's output folder"
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
pub fn send(out_dir: &Path, request: &ArbiterRequest) -> Result<String, String> {
    let token_path: PathBuf = out_dir.join(TOKEN_NAME);
    let token = std::fs::read_to_string(&token_path).map_err(|e| {
        format!(
            "cannot read {}: {e} (is `touchmove record` running with --out {}?)",
            token_path.display(),
            out_dir.display()
        )
    })?;
    let socket = out_dir.join(SOCKET_NAME);
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
        let dir = tempfile::tempdir().unwrap();
        let token = create_token(dir.path()).unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(TOKEN_NAME))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let (tx, mut rx) = mpsc::channel(4);
        let task = listen(dir.path(), token, tx).unwrap();
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
        };
        let path = dir.path().to_path_buf();
        let r = request.clone();
        let answer = tokio::task::spawn_blocking(move || send(&path, &r))
            .await
            .unwrap();
        assert_eq!(answer.unwrap(), "board 3 by anna");
        std::fs::write(dir.path().join(TOKEN_NAME), "forged").unwrap();
        let path = dir.path().to_path_buf();
        let answer = tokio::task::spawn_blocking(move || send(&path, &request))
            .await
            .unwrap();
        assert!(answer.unwrap_err().contains("wrong token"));
        task.abort();
    }
}
