//! A read-only journal file or directory: the recorder is told so, with the fix, and what is
//! recorded stays readable.
//!
//! Root ignores file permissions, so when run as root this test drops its effective user to
//! `nobody` first. That changes the whole process: other tests running beside it could no
//! longer write their own temporary folders, so this is a test binary of its own, with this
//! one test.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use touchmove::store::{BoardKey, Journal};

/// Switches the effective user to `nobody` when running as root, or back (`nobody = false`).
fn act_as_nobody(nobody: bool) {
    // SAFETY: plain system calls without pointers.
    unsafe {
        if libc::getuid() == 0 {
            let uid = if nobody { 65534 } else { 0 };
            assert_eq!(libc::seteuid(uid), 0, "seteuid({uid})");
        }
    }
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn read_only_file_and_directory_are_reported_and_recorded_data_stays_readable() {
    let dir = tempfile::tempdir().unwrap();
    let journals = dir.path().join("journals");
    std::fs::create_dir(&journals).unwrap();
    let path = journals.join("event.journal");
    let key = BoardKey::Pairing { round: 1, board: 1 };
    {
        let mut j = Journal::open(&path).unwrap();
        j.append_bytes(&key, 5, &[1, 2, 3]).unwrap();
    }
    set_mode(dir.path(), 0o755);
    set_mode(&journals, 0o777);
    for f in std::fs::read_dir(&journals).unwrap() {
        set_mode(&f.unwrap().path(), 0o666);
    }
    set_mode(&path, 0o444);
    act_as_nobody(true);

    let err = Journal::open(&path)
        .err()
        .expect("read-only file must be refused");
    assert!(err.is_read_only(), "{err}");
    let message = err.to_string();
    assert!(message.contains("the file is read-only"), "{message}");
    assert!(message.contains("Make it writable"), "{message}");

    let reader = Journal::open_read_only(&path).unwrap();
    assert_eq!(reader.bytes(&key).unwrap()[0].value, vec![1, 2, 3]);
    drop(reader);

    // A new journal in a directory that cannot be written.
    let locked_dir = dir.path().join("locked");
    act_as_nobody(false);
    std::fs::create_dir(&locked_dir).unwrap();
    set_mode(&locked_dir, 0o555);
    act_as_nobody(true);
    let err = Journal::open(locked_dir.join("new.journal"))
        .err()
        .expect("read-only directory must be refused");
    assert!(err.is_read_only(), "{err}");
    assert!(err.to_string().contains("its directory"), "{err}");
    act_as_nobody(false);
}
