//! Bad input to an event on several PCs: wrong credentials, and two recorders with one id.
//! Each gets a clear message, and the recorder concerned goes on recording locally. And the
//! cluster's protection: per-recorder permissions on the servers, TLS with a private CA.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cluster_support::{self, NatsServer, event_file, stop, touchmove};
use crate::recorder_support::{realistic_games, scripts};

/// Waits (up to 20 s) until `log` contains `text`; returns the log.
fn wait_for(log: &Path, text: &str) -> String {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let content = std::fs::read_to_string(log).unwrap_or_default();
        if content.contains(text) || Instant::now() >= until {
            return content;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Adds a `[cluster]` table to an event file.
fn with_cluster(config: &Path, table: &str) {
    let mut text = std::fs::read_to_string(config).unwrap();
    text.push_str(&format!("\n[cluster]\n{table}\n"));
    std::fs::write(config, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_credentials_and_a_second_recorder_with_the_same_id_are_refused_clearly() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let mut nats = NatsServer::reserve(dir.path(), &["--user", "tm", "--pass", "right-one"]);
    nats.restart();
    let url = nats.url();
    let scripts = scripts(&realistic_games(3, 7), 600);
    let (boards, ports) = cluster_support::spawn_cluster_boards(dir.path(), scripts, 4.0);
    let start = |name: &str, board: usize, password: &str, member: &str| {
        let config = event_file(
            dir.path(),
            &format!("{name}.toml"),
            board + 1,
            &ports[board..=board],
        );
        with_cluster(
            &config,
            &format!(
                "urls = [\"{url}\"]\nevent = \"bad-input\"\nrecorder = \"{member}\"\nuser = \"tm\"\npassword = \"{password}\""
            ),
        );
        let log = dir.path().join(format!("{name}.log"));
        let child = touchmove(
            &["record", "--no-server", "--config"],
            &[&config, Path::new("--out"), &dir.path().join(name)],
            &log,
        );
        (child, log)
    };

    let (wrong, wrong_log) = start("wrong", 0, "wrong-one", "pc-w");
    let text = wait_for(&wrong_log, "refused the credentials");
    assert!(
        text.contains("refused the credentials (user \"tm\" with a password)")
            && text.contains("[cluster]")
            && !text.contains("wrong-one"),
        "a clear message that names the kind of credentials, never the secret:\n{text}"
    );

    let (first, first_log) = start("first", 1, "right-one", "pc");
    let text = wait_for(&first_log, "forwarding the journal");
    assert!(text.contains("forwarding the journal"), "{text}");
    let (second, second_log) = start("second", 2, "right-one", "pc");
    let text = wait_for(&second_log, "is already used");
    assert!(
        text.contains("recorder id \"pc\" is already used in event \"bad-input\"")
            && text.contains("Give each PC its own id"),
        "{text}"
    );
    // Both refused recorders record all the same.
    let text = wait_for(&second_log, "connected on");
    for (name, log) in [("wrong", &wrong_log), ("second", &second_log)] {
        let until = Instant::now() + Duration::from_secs(20);
        let board = if name == "wrong" { 1 } else { 3 };
        let file = dir
            .path()
            .join(name)
            .join(format!("round-1/game-{board}.pgn"));
        while recorder_support_plies(&file) < 2 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(200));
        }
        assert!(
            recorder_support_plies(&file) >= 2,
            "{name} records locally:\n{}\n{text}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
    }
    for child in [wrong, first, second] {
        stop(child);
    }
    drop(boards);
}

fn recorder_support_plies(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .map(|t| cluster_support::plies(&t))
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_the_venues_own_ca_carries_the_event() {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    use touchmove::cluster::{ClusterSettings, Credentials};
    let dir = tempfile::tempdir().unwrap();
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "touchmove test venue CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let server_cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&server_key, &Issuer::new(ca, ca_key))
        .unwrap();
    let path = |name: &str| dir.path().join(name);
    std::fs::write(path("ca.pem"), ca_cert.pem()).unwrap();
    std::fs::write(path("server.pem"), server_cert.pem()).unwrap();
    std::fs::write(path("server-key.pem"), server_key.serialize_pem()).unwrap();
    let (cert, key) = (path("server.pem"), path("server-key.pem"));
    let mut nats = NatsServer::reserve(
        dir.path(),
        &[
            "--tls",
            "--tlscert",
            cert.to_str().unwrap(),
            "--tlskey",
            key.to_str().unwrap(),
            "--user",
            "pc",
            "--pass",
            "secret",
        ],
    );
    nats.restart();
    let settings = |tls_ca: Option<PathBuf>| ClusterSettings {
        urls: vec![format!("tls://127.0.0.1:{}", nats.port())],
        credentials: Credentials::UserPassword {
            user: "pc".into(),
            password: "secret".into(),
        },
        event: "tls".into(),
        member: "pc".into(),
        tls_ca,
        replicas: 1,
    };
    let trusted = settings(Some(path("ca.pem")));
    assert!(touchmove::cluster::plain_text_credentials(&trusted).is_empty());
    let client = touchmove::cluster::connect(&trusted)
        .await
        .expect("TLS with the venue's CA connects");
    let js = async_nats::jetstream::new(client);
    let stream = touchmove::cluster::event_stream(&js, &trusted)
        .await
        .expect("the event's stream over TLS");
    let subject = touchmove::cluster::wire::layout_subject("tls", "pc");
    js.publish(subject.clone(), "over TLS".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let stored = stream
        .get_last_raw_message_by_subject(&subject)
        .await
        .unwrap();
    assert_eq!(&stored.payload[..], b"over TLS");
    // A server whose certificate no trusted CA signed is refused.
    let refused = touchmove::cluster::connect(&settings(None)).await;
    assert!(
        refused.is_err(),
        "a certificate of an unknown CA is trusted"
    );
}

/// The server permissions of recorder `pc` in event `event`, as docs/cluster-permissions.md
/// gives them.
fn recorder_permissions(event: &str, pc: &str) -> String {
    format!(
        r#"{{
      publish: {{ allow: [
        "$JS.API.STREAM.INFO.TOUCHMOVE_{event}", "$JS.API.STREAM.CREATE.TOUCHMOVE_{event}",
        "$JS.API.STREAM.MSG.GET.TOUCHMOVE_{event}",
        "$JS.API.STREAM.INFO.KV_touchmove-{event}", "$JS.API.STREAM.CREATE.KV_touchmove-{event}",
        "$JS.API.DIRECT.GET.KV_touchmove-{event}.>",
        "$KV.touchmove-{event}.round.*.claim.*",
        "touchmove.{event}.journal.{pc}", "touchmove.{event}.layout.{pc}",
        "touchmove-replay.{event}.{pc}"
      ] }}
      subscribe: {{ allow: ["_INBOX.>", "touchmove-desk.{event}.{pc}", "touchmove-replay.{event}.{pc}"] }}
      allow_responses: true
    }}"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_recorder_permissions_keep_each_pc_to_its_own_boards() {
    use touchmove::cluster::{ClusterSettings, Credentials};
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let event = "perm";
    let config = dir.path().join("nats.conf");
    std::fs::write(
        &config,
        format!(
            "authorization {{\n  users = [\n    {{ user: \"pc-a\", password: \"a-secret\", permissions: {} }}\n    {{ user: \"serve\", password: \"s-secret\" }}\n  ]\n}}\n",
            recorder_permissions(event, "pc-a")
        ),
    )
    .unwrap();
    let mut nats = NatsServer::reserve(dir.path(), &["-c", config.to_str().unwrap()]);
    nats.restart();
    let url = nats.url();
    let round = cluster_support::played_round(1, 11, 600, 20_000);
    let (boards, ports) =
        cluster_support::spawn_cluster_boards(dir.path(), round.scripts.clone(), 4.0);
    let pc = event_file(dir.path(), "pc-a.toml", 1, &ports);
    with_cluster(
        &pc,
        &format!(
            "urls = [\"{url}\"]\nevent = \"{event}\"\nrecorder = \"pc-a\"\nuser = \"pc-a\"\npassword = \"a-secret\""
        ),
    );
    let serve_config = dir.path().join("serve.toml");
    std::fs::write(
        &serve_config,
        format!("[cluster]\nurls = [\"{url}\"]\nevent = \"{event}\"\nrecorder = \"web\"\nuser = \"serve\"\npassword = \"s-secret\"\n"),
    )
    .unwrap();
    let (pc_log, serve_log) = (dir.path().join("pc-a.log"), dir.path().join("serve.log"));
    let serve_out = dir.path().join("serve");
    let serve = touchmove(
        &["serve", "--no-server", "--config"],
        &[&serve_config, Path::new("--out"), &serve_out],
        &serve_log,
    );
    let recorder = touchmove(
        &["record", "--no-server", "--config"],
        &[&pc, Path::new("--out"), &dir.path().join("pc-a")],
        &pc_log,
    );
    let logs = || {
        format!(
            "--- pc-a\n{}\n--- serve\n{}",
            std::fs::read_to_string(&pc_log).unwrap_or_default(),
            std::fs::read_to_string(&serve_log).unwrap_or_default()
        )
    };
    // PC a, with its own credentials, tries to write for PC b: the server refuses the
    // subject, the serve nodes refuse the payload that names another PC under its own.
    let as_pc_a = ClusterSettings {
        urls: vec![url.clone()],
        credentials: Credentials::UserPassword {
            user: "pc-a".into(),
            password: "a-secret".into(),
        },
        event: event.into(),
        member: "pc-a".into(),
        tls_ca: None,
        replicas: 1,
    };
    let client = touchmove::cluster::connect(&as_pc_a).await.unwrap();
    let js = async_nats::jetstream::ContextBuilder::new()
        .timeout(Duration::from_secs(2))
        .build(client);
    let forged = touchmove::cluster::wire::WireEntry {
        recorder: "pc-b".into(),
        epoch: 1,
        seq: 1,
        board: Some("1.1".into()),
        t_ms: 0,
        record: touchmove::cluster::wire::WireRecord::Bytes {
            data: "AA==".into(),
        },
    };
    let forged = serde_json::to_vec(&forged).unwrap();
    let other = touchmove::cluster::wire::journal_subject(event, "pc-b");
    let written = match js.publish(other, forged.clone().into()).await {
        Ok(ack) => ack.await.is_ok(),
        Err(_) => false,
    };
    assert!(!written, "PC a wrote under PC b's subject\n{}", logs());
    let own = touchmove::cluster::wire::journal_subject(event, "pc-a");
    js.publish(own, forged.into()).await.unwrap().await.unwrap();

    for b in &boards {
        tokio::time::timeout(Duration::from_secs(60), b.finished())
            .await
            .expect("the board finishes its script");
    }
    cluster_support::assert_played(
        &[
            ("pc-a", &dir.path().join("pc-a")),
            ("the serve node", &serve_out),
        ],
        1,
        &round.moves,
        Duration::from_secs(20),
        logs,
    );
    stop(recorder);
    stop(serve);
    let text = logs();
    assert!(
        text.contains("recorder \"pc-a\" published for recorder \"pc-b\": refused")
            && text.contains("forwarding the journal"),
        "{text}"
    );
    drop(boards);
}
