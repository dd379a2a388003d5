//! The arbiter's bearer token: generated at start-up, stored owner-only, printed once.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;

/// A fresh random token: 32 bytes from the OS generator, base64url without padding.
pub fn generate() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Writes `token` to `path` readable and writable by the owner only (mode 0600), replacing
/// any previous file. The mode is set at creation, so the token is never world-readable.
pub fn store(path: &Path, token: &str) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    // An existing file keeps its old mode on open; tighten it explicitly.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(token.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()
}

/// Reads a token file written by [`store`] (or by hand): the first line, trimmed.
pub fn load(path: &Path) -> io::Result<String> {
    let text = std::fs::read_to_string(path)?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} holds no token", path.display()),
        ));
    }
    Ok(token)
}

/// Compares a presented token with the expected one in time independent of where they differ.
pub fn matches(presented: &str, expected: &str) -> bool {
    let (a, b) = (presented.as_bytes(), expected.as_bytes());
    if a.len() != b.len() || b.is_empty() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The start-up lines that tell people where the pages are and how to act as arbiter.
pub fn banner(addr: SocketAddr, token: &str, token_file: Option<&Path>) -> String {
    let base = format!("http://{addr}");
    let mut text =
        format!("Spectators:   {base}/\nArbiter:      {base}/arbiter\nArbiter token: {token}\n");
    if let Some(path) = token_file {
        text.push_str(&format!(
            "(token stored in {}, mode 0600)\n",
            path.display()
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_compared_exactly() {
        let (a, b) = (generate(), generate());
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert!(matches(&a, &a));
        assert!(!matches(&a, &b));
        assert!(!matches("", ""));
        assert!(!matches(&a[..10], &a));
    }

    #[test]
    fn stored_token_is_owner_only_and_loads_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("token");
        std::fs::write(&path, "old").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        store(&path, "secret").expect("store");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load(&path).expect("load"), "secret");
    }
}
