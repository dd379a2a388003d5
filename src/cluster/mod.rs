//! An event on several PCs (shell): recorders and broadcast nodes joined by NATS JetStream.
//!
//! ```text
//! PC 1: boards ─► record ─► journal (SQLite) ─► forwarder ─┐
//! PC 2: boards ─► record ─► journal (SQLite) ─► forwarder ─┼─► stream TOUCHMOVE_<event>
//!                                                          │        │
//!                 serve ◄── durable consumer ◄─────────────┘◄───────┘
//!                   └─► same pages, SSE, JSON, PGN files as `record`
//! ```
//!
//! Each recorder's journal stays the write-ahead truth and is its outbox: the
//! [`forwarder`] publishes every journal entry, in journal order, with the deterministic
//! message id `RECORDER/EPOCH/SEQ` ([`wire::message_id`]), waits for the stream's acks and
//! resumes after the last entry acked, so a retry after an outage is de-duplicated by the
//! server and recording never waits for the network. A [`broadcast`] node reads the stream
//! and rebuilds every board with the recorder's own pipeline
//! ([`crate::recorder::BoardPipeline`]), applying each recorder's entries exactly once and in
//! journal order, whatever the stream redelivers.

pub mod broadcast;
pub mod desk;
pub mod event_layout;
pub mod forwarder;
pub mod settings;
pub mod wire;

pub use settings::{ClusterSettings, Credentials};

use std::time::Duration;

use async_nats::jetstream;

/// Worker threads of the cluster's own runtime.
const CLUSTER_THREADS: usize = 2;

/// Starts `task` (a forwarder's or a broadcast node's, with the connection it makes) on the
/// cluster's own runtime, whose threads the system schedules beside the caller's: when every
/// board of a recorder moves at once, its thousands of ready board tasks would otherwise queue
/// ahead of each step of the forwarding (read, publish, ack), so that the entries reach the
/// stream only after the whole burst is recorded. The tasks are the same; only where they run
/// changes. Without that runtime (it could not be made) the task runs on the caller's.
pub(crate) fn spawn<F>(task: F) -> tokio::task::JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    static RUNTIME: std::sync::OnceLock<Option<tokio::runtime::Runtime>> =
        std::sync::OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(CLUSTER_THREADS)
            .thread_name("cluster")
            .enable_all()
            .build()
            .map_err(|e| tracing::warn!("cluster tasks share the recorder's runtime: {e}"))
            .ok()
    });
    match runtime {
        Some(runtime) => runtime.spawn(task),
        None => tokio::spawn(task),
    }
}

/// Why the cluster could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// No server answered.
    #[error(
        "cannot reach the cluster at {urls}: {message} (is `nats-server -js` running there, and \
         is the address right?)"
    )]
    Unreachable {
        /// The servers tried.
        urls: String,
        /// What the client said.
        message: String,
    },
    /// The server refused the credentials.
    #[error(
        "the cluster at {urls} refused the credentials ({how}): {message}; check user/password, \
         token or creds file in the [cluster] table of the event file or on the command line"
    )]
    Credentials {
        /// The servers tried.
        urls: String,
        /// Which kind of credentials were sent.
        how: String,
        /// What the server said.
        message: String,
    },
    /// The credentials file could not be read.
    #[error("cannot read the NATS credentials file {path}: {source}")]
    CredentialsFile {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The event's stream exists with settings that do not fit.
    #[error(
        "the stream {stream} exists with other settings ({detail}); it was not created by \
         touchmove for this event: choose another event id or remove the stream"
    )]
    StreamSettings {
        /// The stream.
        stream: String,
        /// What differs.
        detail: String,
    },
    /// JetStream refused a request.
    #[error("JetStream ({what}): {message} (is the server started with -js?)")]
    JetStream {
        /// The request.
        what: String,
        /// What it said.
        message: String,
    },
}

/// How long a connection attempt may take before the cluster counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The servers of `settings` that would receive its credentials in plain text: `nats://`
/// URLs to an address other than loopback, without TLS required (`tls_ca`).
pub fn plain_text_credentials(settings: &ClusterSettings) -> Vec<String> {
    if settings.credentials == Credentials::None || settings.tls_ca.is_some() {
        return Vec::new();
    }
    settings
        .urls
        .iter()
        .filter(|url| {
            let rest = match url.split_once("://") {
                Some(("nats", rest)) => rest,
                Some(_) => return false,
                None => url.as_str(),
            };
            let host_port = rest.rsplit('@').next().unwrap_or(rest);
            let host = host_port
                .strip_prefix('[')
                .and_then(|h| h.split(']').next())
                .unwrap_or_else(|| host_port.split(':').next().unwrap_or(host_port));
            let loopback = host == "localhost"
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback());
            !loopback
        })
        .cloned()
        .collect()
}

/// Connects to the cluster with `settings`' credentials.
pub async fn connect(settings: &ClusterSettings) -> Result<async_nats::Client, ClusterError> {
    let urls = settings.urls.join(",");
    let plain = plain_text_credentials(settings);
    if !plain.is_empty() {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            tracing::warn!("credentials in plain text to {}", plain.join(","));
            eprintln!(
                "touchmove: warning: {} go in plain text to {}: anyone on that network can read \
                 them. Use tls://HOST:PORT with `tls_ca` in the [cluster] table (the server \
                 started with --tls), or a server on this PC",
                settings.credentials.describe(),
                plain.join(",")
            );
        });
    }
    let mut options = async_nats::ConnectOptions::new()
        .connection_timeout(CONNECT_TIMEOUT)
        .name(format!("touchmove {}", settings.member))
        .max_reconnects(None);
    options = match &settings.credentials {
        Credentials::None => options,
        Credentials::UserPassword { user, password } => {
            options.user_and_password(user.clone(), password.clone())
        }
        Credentials::Token(token) => options.token(token.clone()),
        Credentials::File(path) => options.credentials_file(path).await.map_err(|source| {
            ClusterError::CredentialsFile {
                path: path.clone(),
                source,
            }
        })?,
    };
    if let Some(ca) = &settings.tls_ca {
        options = options.add_root_certificates(ca.clone()).require_tls(true);
    }
    let addrs: Vec<async_nats::ServerAddr> = settings
        .urls
        .iter()
        .map(|u| u.parse())
        .collect::<Result<_, _>>()
        .map_err(|e: std::io::Error| ClusterError::Unreachable {
            urls: urls.clone(),
            message: format!("not a server address ({e})"),
        })?;
    options.connect(addrs).await.map_err(|e| {
        let message = e.to_string();
        match e.kind() {
            async_nats::ConnectErrorKind::AuthorizationViolation
            | async_nats::ConnectErrorKind::Authentication => ClusterError::Credentials {
                urls: urls.clone(),
                how: settings.credentials.describe(),
                message,
            },
            _ => ClusterError::Unreachable {
                urls: urls.clone(),
                message,
            },
        }
    })
}

/// Opens the event's stream, creating it when it does not exist; refuses a stream of that
/// name that does not carry the event's subjects.
pub async fn event_stream(
    js: &jetstream::Context,
    settings: &ClusterSettings,
) -> Result<jetstream::stream::Stream, ClusterError> {
    let name = wire::stream_name(&settings.event);
    let subjects = wire::all_subjects(&settings.event);
    let mut stream = match js.get_stream(&name).await {
        Ok(stream) => stream,
        Err(e)
            if matches!(
                e.kind(),
                jetstream::context::GetStreamErrorKind::JetStream(ref j)
                    if j.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND
            ) =>
        {
            let config = jetstream::stream::Config {
                name: name.clone(),
                subjects: vec![subjects.clone()],
                storage: jetstream::stream::StorageType::File,
                num_replicas: settings.replicas,
                duplicate_window: wire::DUPLICATE_WINDOW,
                ..Default::default()
            };
            js.create_stream(config)
                .await
                .map_err(|e| ClusterError::JetStream {
                    what: format!("create stream {name}"),
                    message: e.to_string(),
                })?
        }
        Err(e) => {
            return Err(ClusterError::JetStream {
                what: format!("stream {name}"),
                message: e.to_string(),
            });
        }
    };
    let info = stream.info().await.map_err(|e| ClusterError::JetStream {
        what: format!("stream {name} info"),
        message: e.to_string(),
    })?;
    let config = &info.config;
    if config.subjects != [subjects.clone()] {
        return Err(ClusterError::StreamSettings {
            stream: name,
            detail: format!("subjects {:?}, not [{subjects}]", config.subjects),
        });
    }
    if config.max_messages > 0 || config.max_bytes > 0 || !config.max_age.is_zero() {
        return Err(ClusterError::StreamSettings {
            stream: name,
            detail: "it drops old messages (max_msgs, max_bytes or max_age set)".to_string(),
        });
    }
    Ok(stream)
}

/// Says something the operator should know, on stderr and in the log.
pub(crate) fn say(who: &str, message: &str) {
    eprintln!("touchmove {who}: {message}");
    tracing::info!("{message}");
}

/// Says something the operator must see, on stderr and in the log.
pub(crate) fn loud(who: &str, message: &str) {
    eprintln!("touchmove {who}: {message}");
    tracing::error!("{message}");
}

/// Milliseconds since 1970 now.
pub(crate) fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_plain_text_to_another_host_are_named() {
        let settings = |urls: &[&str], credentials: Credentials, tls: bool| ClusterSettings {
            urls: urls.iter().map(|u| u.to_string()).collect(),
            credentials,
            event: "e".into(),
            member: "m".into(),
            tls_ca: tls.then(|| "ca.pem".into()),
            replicas: 1,
        };
        let token = || Credentials::Token("t".into());
        let urls = [
            "nats://127.0.0.1:4222",
            "nats://localhost:4222",
            "nats://[::1]:4222",
            "tls://10.0.0.2:4222",
            "nats://10.0.0.3:4222",
            "10.0.0.4:4222",
            "nats://u:p@hall.example:4222",
        ];
        assert_eq!(
            plain_text_credentials(&settings(&urls, token(), false)),
            [
                "nats://10.0.0.3:4222",
                "10.0.0.4:4222",
                "nats://u:p@hall.example:4222"
            ]
        );
        assert!(plain_text_credentials(&settings(&urls, token(), true)).is_empty());
        assert!(plain_text_credentials(&settings(&urls, Credentials::None, false)).is_empty());
    }
}
