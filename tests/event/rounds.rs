//! Rounds that follow by `touchmove record --round N+1`: the next round's recorder keeps the
//! earlier round's folder and files as they were, serves its games (pages, PGN), and says that
//! the new round is the current one, so that the pages move to it. The arbiter's token belongs
//! to the event: the same in every round, whether the next round is started from the command
//! line or from the desk.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::recorder_support::{self, fixture_opening, read_board, real_time_board, stop};
use touchmove::sim::virtual_board::timeline::Pace;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn record(board: &Path, round: u32, port: u16, out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["record", "--event", "Rounds test", "--port"])
        .arg(board)
        .args(["--round", &round.to_string(), "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs")
}

async fn get_json(client: &reqwest::Client, url: &str) -> Option<serde_json::Value> {
    let text = client.get(url).send().await.ok()?.text().await.ok()?;
    serde_json::from_str(&text).ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_round_keeps_the_earlier_one_and_becomes_current() {
    let dir = tempfile::tempdir().unwrap();
    let board = real_time_board(
        dir.path(),
        &fixture_opening(0, 4),
        Pace {
            think_ms: 200,
            step_ms: 50,
        },
    );
    let out = dir.path().join("out");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();

    let first = record(board.path(), 1, port, &out);
    tokio::time::timeout(Duration::from_secs(30), board.finished())
        .await
        .expect("the board plays its moves");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let token_file = recorder_support::state_dir(&out).join("arbiter.token");
    let token = std::fs::read_to_string(&token_file).expect("round 1 has a token");
    stop(first);
    let round_1 = std::fs::read(out.join("round-1/game-1.pgn")).unwrap();
    assert_eq!(read_board(&out, 1).moves.len(), 4);

    let second = record(board.path(), 2, port, &out);
    let mut current = None;
    for _ in 0..100 {
        current = get_json(&client, &format!("{base}/api/current")).await;
        if current.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let current = current.expect("the round 2 recorder answers");
    assert_eq!(current["round"], 2, "{current}");
    assert_eq!(current["rounds"], serde_json::json!([1, 2]), "{current}");

    let earlier = get_json(&client, &format!("{base}/api/round/1"))
        .await
        .expect("round 1 is served");
    let games = earlier["games"].as_array().unwrap();
    assert_eq!(games.len(), 1, "{earlier}");
    assert_eq!(games[0]["ply"], 4);
    assert_eq!(games[0]["white"], "?");
    let detail = get_json(&client, &format!("{base}/api/round/1/game/1"))
        .await
        .expect("round 1's game is served");
    assert_eq!(detail["moves"].as_array().unwrap().len(), 4);
    let pgn = client
        .get(format!("{base}/round/1/game/1.pgn"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(pgn.contains("[Round \"1.1\"]"), "{pgn}");
    let refused = client
        .post(format!("{base}/api/arbiter/next-round"))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(refused.as_u16(), 401, "next round needs the arbiter token");
    assert_eq!(
        std::fs::read_to_string(&token_file).unwrap(),
        token,
        "`record --round 2` keeps the event's token"
    );
    let next_round = |body: &'static str| {
        client
            .post(format!("{base}/api/arbiter/next-round"))
            .bearer_auth(&token)
            .body(body)
            .send()
    };
    let started = next_round(r#"{"round": 2}"#).await.unwrap();
    assert!(started.status().is_success(), "{:?}", started.text().await);
    let mut current = serde_json::Value::Null;
    for _ in 0..100 {
        if let Some(c) = get_json(&client, &format!("{base}/api/current")).await {
            current = c;
            if current["round"] == 3 {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(current["round"], 3, "the desk started round 3: {current}");
    let again = next_round(r#"{"round": 2}"#).await.unwrap();
    let status = again.status().as_u16();
    let said = again.text().await.unwrap_or_default();
    assert_eq!(status, 409, "closing round 2 again is refused: {said}");
    assert!(said.contains("round 3 is"), "{said}");
    let malformed = next_round("round two").await.unwrap().status();
    assert_eq!(
        malformed.as_u16(),
        400,
        "a body that is not JSON is refused"
    );
    let current = get_json(&client, &format!("{base}/api/current")).await;
    assert_eq!(
        current.as_ref().map(|c| c["round"].clone()),
        Some(serde_json::json!(3)),
        "requests refused start no round"
    );
    assert_eq!(
        std::fs::read_to_string(&token_file).unwrap(),
        token,
        "the desk's round 3 keeps the event's token"
    );

    tokio::time::sleep(Duration::from_millis(500)).await;
    stop(second);
    assert_eq!(
        std::fs::read(out.join("round-1/game-1.pgn")).unwrap(),
        round_1,
        "round 1's file is left as it was"
    );
    assert!(out.join("round-2").is_dir());
}
