//! Where the cluster is and who this member is: the `[cluster]` table of the event file and
//! the `--cluster` options.
//!
//! ```toml
//! [cluster]
//! urls = ["nats://10.0.0.2:4222", "nats://10.0.0.3:4222"]
//! event = "olympiad-2026"        # the event id: one stream per event
//! recorder = "hall-b-pc-07"      # this PC's id (default: the host name)
//! creds = "pc07.creds"           # or user/password, or token
//! tls_ca = "venue-ca.pem"        # require TLS, trusting this CA
//! replicas = 3                   # stream replicas when this member creates it
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::event::EventFile;

/// How a member proves who it is to the servers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Credentials {
    /// Nothing (a server without authorisation).
    #[default]
    None,
    /// User name and password.
    UserPassword {
        /// User.
        user: String,
        /// Password.
        password: String,
    },
    /// A token.
    Token(String),
    /// A NATS credentials file (JWT and NKey seed).
    File(PathBuf),
}

impl Credentials {
    /// Which kind of credentials, for messages (never the secret itself).
    pub fn describe(&self) -> String {
        match self {
            Credentials::None => "no credentials".to_string(),
            Credentials::UserPassword { user, .. } => format!("user {user:?} with a password"),
            Credentials::Token(_) => "a token".to_string(),
            Credentials::File(path) => format!("creds file {}", path.display()),
        }
    }
}

/// A member's cluster settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSettings {
    /// Server URLs (`nats://HOST:PORT`).
    pub urls: Vec<String>,
    /// Credentials.
    pub credentials: Credentials,
    /// The event id: names the stream (`TOUCHMOVE_<id>`) and its subjects.
    pub event: String,
    /// This member's id: a recorder's id is part of every message id it publishes, so it must
    /// be unique in the event and stable across restarts.
    pub member: String,
    /// Trust this CA and require TLS.
    pub tls_ca: Option<PathBuf>,
    /// Replicas of the stream when this member creates it (3 on a 3-node cluster).
    pub replicas: usize,
}

/// The `[cluster]` table as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCluster {
    urls: Option<Vec<String>>,
    event: Option<String>,
    recorder: Option<String>,
    creds: Option<PathBuf>,
    user: Option<String>,
    password: Option<String>,
    token: Option<String>,
    tls_ca: Option<PathBuf>,
    replicas: Option<usize>,
}

/// What the command line says about the cluster (`--cluster…` of `record` and `serve`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClusterArgs {
    /// Join the event's NATS JetStream cluster at this server (`nats://HOST:PORT`, repeat
    /// for several servers); also `urls` in the event file's [cluster] table.
    #[arg(long = "cluster", value_name = "URL")]
    pub urls: Vec<String>,
    /// The event id in the cluster (one stream per event); default for `record`: the event
    /// name.
    #[arg(long = "cluster-event", value_name = "ID")]
    pub event: Option<String>,
    /// This PC's id in the cluster, unique and the same across restarts (default: the host
    /// name).
    #[arg(long = "cluster-member", value_name = "ID")]
    pub member: Option<String>,
    /// NATS credentials file (user/password or token: in the [cluster] table).
    #[arg(long = "cluster-creds", value_name = "FILE")]
    pub creds: Option<PathBuf>,
}

impl ClusterSettings {
    /// The settings from the command line and the `[cluster]` table of the event file (the
    /// command line wins); `None` when neither names a server. `default_event` is used when
    /// no event id is given (`None`: the id is required).
    pub fn resolve(
        args: &ClusterArgs,
        event_file: Option<&EventFile>,
        default_event: Option<&str>,
    ) -> Result<Option<ClusterSettings>, String> {
        let raw = match event_file {
            Some(file) => read_table(file)?,
            None => RawCluster::default(),
        };
        let here = |p: &Path| match event_file.and_then(EventFile::folder) {
            Some(dir) if p.is_relative() => dir.join(p),
            _ => p.to_path_buf(),
        };
        let urls = if args.urls.is_empty() {
            raw.urls.clone().unwrap_or_default()
        } else {
            args.urls.clone()
        };
        if urls.is_empty() {
            return Ok(None);
        }
        let event = args
            .event
            .clone()
            .or(raw.event.clone())
            .or(default_event.map(str::to_string))
            .ok_or_else(|| {
                "no event id: give --cluster-event ID or `event = \"…\"` in the [cluster] table"
                    .to_string()
            })?;
        let event = sanitise(&event);
        if event.is_empty() {
            return Err("the cluster event id is empty; give --cluster-event ID".to_string());
        }
        let member = sanitise(
            &args
                .member
                .clone()
                .or(raw.recorder.clone())
                .unwrap_or_else(host_name),
        );
        let credentials = match (&args.creds, &raw) {
            (Some(path), _) => Credentials::File(path.clone()),
            (None, RawCluster { creds: Some(p), .. }) => Credentials::File(here(p)),
            (
                None,
                RawCluster {
                    user: Some(user),
                    password,
                    ..
                },
            ) => Credentials::UserPassword {
                user: user.clone(),
                password: password.clone().unwrap_or_default(),
            },
            (None, RawCluster { token: Some(t), .. }) => Credentials::Token(t.clone()),
            _ => Credentials::None,
        };
        Ok(Some(ClusterSettings {
            urls,
            credentials,
            event,
            member,
            tls_ca: raw.tls_ca.as_deref().map(here),
            replicas: raw.replicas.unwrap_or(1).max(1),
        }))
    }
}

/// Reads the `[cluster]` table of an event file (an absent table is an empty one).
fn read_table(file: &EventFile) -> Result<RawCluster, String> {
    let Some(table) = &file.cluster else {
        return Ok(RawCluster::default());
    };
    toml::Value::Table(table.clone()).try_into().map_err(|e| {
        let name = file
            .path
            .as_deref()
            .map_or("the event".to_string(), |p| p.display().to_string());
        format!("{name}: [cluster]: {e}")
    })
}

/// Letters, digits, `-` and `_` only: the id goes into subjects and stream names.
pub fn sanitise(id: &str) -> String {
    id.trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// This machine's host name (the default recorder id).
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it or
    // fails.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let len = buf.iter().position(|&b| b == 0).unwrap_or(0);
    Some(String::from_utf8_lossy(&buf[..len]).into_owned())
        .filter(|h| ok && !h.is_empty())
        .unwrap_or_else(|| "recorder".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> EventFile {
        EventFile::parse(text, Path::new("event.toml")).unwrap()
    }

    #[test]
    fn the_table_and_the_command_line_combine() {
        let f = file(
            "event = \"X\"\n[cluster]\nurls = [\"nats://a:1\"]\nevent = \"Open 2026\"\nrecorder = \"pc 7\"\nuser = \"u\"\npassword = \"p\"\n",
        );
        let s = ClusterSettings::resolve(&ClusterArgs::default(), Some(&f), None)
            .unwrap()
            .unwrap();
        assert_eq!(s.urls, ["nats://a:1"]);
        assert_eq!(s.event, "Open_2026");
        assert_eq!(s.member, "pc_7");
        assert_eq!(
            s.credentials,
            Credentials::UserPassword {
                user: "u".into(),
                password: "p".into()
            }
        );
        let args = ClusterArgs {
            urls: vec!["nats://b:2".into()],
            member: Some("m".into()),
            ..ClusterArgs::default()
        };
        let s = ClusterSettings::resolve(&args, Some(&f), None)
            .unwrap()
            .unwrap();
        assert_eq!((s.urls[0].as_str(), s.member.as_str()), ("nats://b:2", "m"));
    }

    #[test]
    fn no_server_means_no_cluster_and_a_missing_id_is_named() {
        assert_eq!(
            ClusterSettings::resolve(&ClusterArgs::default(), None, Some("e")).unwrap(),
            None
        );
        let args = ClusterArgs {
            urls: vec!["nats://b:2".into()],
            ..ClusterArgs::default()
        };
        let e = ClusterSettings::resolve(&args, None, None).unwrap_err();
        assert!(e.contains("--cluster-event"), "{e}");
        let f = file("[cluster]\nurl = \"x\"\n");
        let e = ClusterSettings::resolve(&args, Some(&f), Some("e")).unwrap_err();
        assert!(e.contains("[cluster]") && e.contains("url"), "{e}");
    }
}
