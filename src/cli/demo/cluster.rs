//! `touchmove demo --cluster URL`: the recorded demo as an event on several PCs. The virtual
//! boards run in the demo process; two `touchmove record --cluster` processes each record
//! half of them, and one `touchmove serve` node rebuilds every board from the stream and
//! serves the pages, all joined by the NATS JetStream server at URL.
//!
//! ```text
//! demo: virtual boards 1..⌈N/2⌉ ─► record pc-a ─┐
//!       virtual boards ⌈N/2⌉+1..N ─► record pc-b ─┼─► nats-server ─► serve ─► pages, PGN
//! ```

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::recorded::demo_boards;
use super::{DemoArgs, interrupted};
use crate::record::GameRecord;
use crate::recorder::{BoardConfig, BoardSource, EventConfig, Player};
use crate::server;

/// How long the demo waits for its processes' web servers.
const START_LIMIT: Duration = Duration::from_secs(30);
/// How long a process may take to stop after SIGTERM before it is killed.
const STOP_LIMIT: Duration = Duration::from_secs(10);
/// The serve node's id in the cluster.
const SERVE_MEMBER: &str = "web";
/// The serve node's output folder in the demo's.
const SERVE_FOLDER: &str = "broadcast";

/// One process of the demo's event.
struct Member {
    name: String,
    child: Child,
}

/// A recorder process of the demo: its name, output folder and the boards it records.
struct Recorder {
    name: String,
    out: PathBuf,
    numbers: String,
}

/// Runs the demo split into two recorder processes and one serve node on the cluster at
/// `url`.
pub(super) async fn run(args: &DemoArgs, games: &[GameRecord], url: &str) -> ExitCode {
    let fail = |message: String| {
        eprintln!("touchmove demo: {message}");
        ExitCode::FAILURE
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return fail(format!("cannot find the touchmove program to start: {e}")),
    };
    let boards = match demo_boards(args, games, 1) {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    // A new event id each run: the stream of an earlier demo on the same server stays apart.
    let event_id = format!("demo-{}", crate::cluster::unix_ms() / 1000);
    let (addresses, found) = mpsc::channel::<(String, SocketAddr)>();
    let mut members: Vec<Member> = Vec::new();
    let started = start_members(
        args,
        &exe,
        url,
        &event_id,
        &boards.config,
        &addresses,
        &mut members,
    );
    drop(addresses);
    let pages = started
        .and_then(|recorders| await_pages(&found, &mut members).map(|pages| (recorders, pages)));
    let (recorders, pages) = match pages {
        Ok(started) => started,
        Err(e) => {
            stop_all(members);
            boards.close();
            return fail(e);
        }
    };
    print_where(args, url, &event_id, &recorders, &pages);
    let status = tokio::select! {
        _ = interrupted() => ExitCode::SUCCESS,
        message = member_exit(&mut members) => fail(message),
    };
    println!("\nStopping…");
    stop_all(members);
    boards.close();
    println!("PGN files are complete under {}", args.out.display());
    status
}

/// Starts the two recorders, each with half of the boards of `config`, and the serve node,
/// into `members`; their web servers' addresses go to `addresses`.
fn start_members(
    args: &DemoArgs,
    exe: &Path,
    url: &str,
    event_id: &str,
    config: &EventConfig,
    addresses: &mpsc::Sender<(String, SocketAddr)>,
    members: &mut Vec<Member>,
) -> Result<Vec<Recorder>, String> {
    let half = config.boards.len().div_ceil(2);
    let mut recorders = Vec::new();
    for (name, part) in [
        ("pc-a", &config.boards[..half]),
        ("pc-b", &config.boards[half..]),
    ] {
        if part.is_empty() {
            continue;
        }
        let file = args.out.join(format!("{name}.toml"));
        std::fs::write(&file, event_file(config, part))
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        let out = args.out.join(name);
        let mut command = Command::new(exe);
        command
            .arg("record")
            .arg("--config")
            .arg(&file)
            .arg("--out")
            .arg(&out)
            .args(["--listen", "127.0.0.1:0", "--cluster", url])
            .args(["--cluster-event", event_id, "--cluster-member", name]);
        members.push(start(name, command, addresses)?);
        let numbers = match (part.first(), part.last()) {
            (Some(a), Some(b)) if a.number != b.number => {
                format!("boards {}–{}", a.number, b.number)
            }
            (Some(a), _) => format!("board {}", a.number),
            _ => String::new(),
        };
        recorders.push(Recorder {
            name: name.to_string(),
            out,
            numbers,
        });
    }
    let mut command = Command::new(exe);
    command
        .arg("serve")
        .args(["--cluster", url, "--cluster-event", event_id])
        .args(["--cluster-member", SERVE_MEMBER, "--listen"])
        .arg(args.listen.to_string())
        .arg("--out")
        .arg(args.out.join(SERVE_FOLDER));
    members.push(start(SERVE_MEMBER, command, addresses)?);
    Ok(recorders)
}

/// Prints where each process's pages and PGN files are, and the serve node's arbiter token.
fn print_where(
    args: &DemoArgs,
    url: &str,
    event_id: &str,
    recorders: &[Recorder],
    pages: &[(String, SocketAddr)],
) {
    println!(
        "touchmove demo: virtual boards ({}), real games, realistic hands, as an event on \
         several PCs: event {event_id:?} on {url}",
        args.boards
    );
    for recorder in recorders {
        let page = pages
            .iter()
            .find(|(n, _)| *n == recorder.name)
            .map(|(_, a)| format!(", its own pages at http://{a}/"))
            .unwrap_or_default();
        println!(
            "  recorder {}: {}, PGN files in {}/round-1/{page}",
            recorder.name,
            recorder.numbers,
            recorder.out.display()
        );
    }
    let serve_addr = pages
        .iter()
        .find(|(n, _)| n == SERVE_MEMBER)
        .map(|(_, a)| *a);
    if let Some(addr) = serve_addr {
        let serve_out = args.out.join(SERVE_FOLDER);
        println!(
            "  serve node {SERVE_MEMBER}: every board, PGN files in {}/round-1/",
            serve_out.display()
        );
        println!("The serve node is live at http://{addr}/");
        let token_file = crate::recorder::layout::state_dir(&serve_out)
            .join(crate::recorder::channel::TOKEN_NAME);
        let token = server::token::load(&token_file).unwrap_or_default();
        print!("{}", server::token::banner(addr, &token, Some(&token_file)));
    }
    println!("Press Ctrl-C to stop.");
}

/// Starts one member with its stderr relayed to ours (prefixed with its name); the address
/// its web server reports is sent to `addresses`.
fn start(
    name: &str,
    mut command: Command,
    addresses: &mpsc::Sender<(String, SocketAddr)>,
) -> Result<Member, String> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl is async-signal-safe and touches no memory of the parent; it makes a
        // member stop with the demo even when the demo is killed without a chance to stop it.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {name} ({:?}): {e}", command.get_program()))?;
    if let Some(stderr) = child.stderr.take() {
        let (name, addresses) = (name.to_string(), addresses.clone());
        std::thread::spawn(move || relay(&name, stderr, &addresses));
    }
    Ok(Member {
        name: name.to_string(),
        child,
    })
}

/// Copies a member's messages to our stderr (its log lines, which repeat them with a
/// timestamp, are left out) and reports its web address.
fn relay(
    name: &str,
    stderr: std::process::ChildStderr,
    addresses: &mpsc::Sender<(String, SocketAddr)>,
) {
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { return };
        if let Some(addr) = line
            .split("live at http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|a| a.parse().ok())
        {
            let _ = addresses.send((name.to_string(), addr));
        }
        if line.starts_with(|c: char| c == '\u{1b}' || c.is_ascii_digit()) {
            continue;
        }
        eprintln!("[{name}] {line}");
    }
}

/// The web addresses of all members, once each has reported its own.
fn await_pages(
    found: &mpsc::Receiver<(String, SocketAddr)>,
    members: &mut [Member],
) -> Result<Vec<(String, SocketAddr)>, String> {
    let until = Instant::now() + START_LIMIT;
    let mut pages: Vec<(String, SocketAddr)> = Vec::new();
    while pages.len() < members.len() {
        match found.recv_timeout(Duration::from_millis(100)) {
            Ok(page) => pages.push(page),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        for member in members.iter_mut() {
            if let Ok(Some(status)) = member.child.try_wait() {
                return Err(format!(
                    "{} stopped at its start ({status}); its messages are above",
                    member.name
                ));
            }
        }
        if Instant::now() >= until {
            return Err(format!(
                "the web servers did not start within {} s",
                START_LIMIT.as_secs()
            ));
        }
    }
    Ok(pages)
}

/// Waits until a member stops by itself; says which and how.
async fn member_exit(members: &mut [Member]) -> String {
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        for member in members.iter_mut() {
            if let Ok(Some(status)) = member.child.try_wait() {
                return format!(
                    "{} stopped ({status}); its messages are above. Stopping the demo",
                    member.name
                );
            }
        }
    }
}

/// Stops the members as Ctrl-C would, recorders first so that the serve node still reads
/// their last entries; kills any that does not stop within [`STOP_LIMIT`].
fn stop_all(members: Vec<Member>) {
    let (serve, recorders): (Vec<Member>, Vec<Member>) =
        members.into_iter().partition(|m| m.name == SERVE_MEMBER);
    for group in [recorders, serve] {
        for member in &group {
            let pid = nix::unistd::Pid::from_raw(member.child.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        }
        for mut member in group {
            let until = Instant::now() + STOP_LIMIT;
            loop {
                match member.child.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() >= until => {
                        eprintln!("touchmove demo: {} did not stop; killing it", member.name);
                        let _ = member.child.kill();
                        let _ = member.child.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        }
    }
}

/// The event file of one recorder: `config` with the boards `boards` only.
fn event_file(config: &EventConfig, boards: &[BoardConfig]) -> String {
    use toml::{Table, Value};
    let mut table = Table::new();
    table.insert("event".into(), config.event.clone().into());
    table.insert("site".into(), config.site.clone().into());
    table.insert("date".into(), config.date.clone().into());
    table.insert("round".into(), i64::from(config.round).into());
    if let Some(tc) = &config.time_control {
        table.insert("time_control".into(), tc.clone().into());
    }
    let boards: Vec<Value> = boards
        .iter()
        .map(|b| {
            let mut board = Table::new();
            board.insert("number".into(), i64::from(b.number).into());
            if let BoardSource::Port(port) = &b.source {
                board.insert("port".into(), port.to_string_lossy().into_owned().into());
            }
            if b.kind != crate::board::kind::BoardKind::Dgt {
                board.insert("kind".into(), b.kind.name().into());
            }
            board.insert("white".into(), Value::Table(player_table(&b.white)));
            board.insert("black".into(), Value::Table(player_table(&b.black)));
            Value::Table(board)
        })
        .collect();
    table.insert("board".into(), Value::Array(boards));
    toml::to_string(&table).unwrap_or_default()
}

fn player_table(player: &Player) -> toml::Table {
    let mut table = toml::Table::new();
    table.insert("name".into(), player.name.clone().into());
    if let Some(id) = player.fide_id.and_then(|id| i64::try_from(id).ok()) {
        table.insert("fide_id".into(), id.into());
    }
    if let Some(title) = &player.title {
        table.insert("title".into(), title.clone().into());
    }
    if let Some(rating) = player.rating {
        table.insert("rating".into(), i64::from(rating).into());
    }
    if let Some(federation) = &player.federation {
        table.insert("federation".into(), federation.clone().into());
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_recorders_event_file_reads_back_as_its_half_of_the_event() {
        let board = |number: u32| BoardConfig {
            number,
            source: BoardSource::Port(PathBuf::from(format!("/tmp/demo/board-{number}"))),
            kind: crate::board::kind::BoardKind::Dgt,
            leds: crate::recorder::leds::LedMode::Off,
            white: Player {
                name: "Abdusattorov, \"Nodirbek\"".into(),
                fide_id: Some(14204118),
                title: Some("GM".into()),
                rating: Some(2766),
                federation: None,
            },
            black: Player::named("Gukesh D"),
        };
        let config = EventConfig {
            event: "touchmove demo: UzChess Cup".into(),
            site: "Tashkent".into(),
            date: "2025.06.20".into(),
            round: 1,
            time_control: Some("900+10".into()),
            leds: crate::recorder::leds::LedMode::Off,
            boards: (1..=4).map(board).collect(),
        };
        let text = event_file(&config, &config.boards[2..]);
        let read = EventConfig::parse(&text, Path::new("pc-b.toml")).unwrap();
        assert_eq!(
            read,
            EventConfig {
                boards: config.boards[2..].to_vec(),
                ..config.clone()
            },
            "{text}"
        );
    }
}
