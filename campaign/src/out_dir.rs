//! Output directories (`--report DIR`, `--out DIR`): checked before any work runs, so a long run
//! never ends in "cannot write", and held by one `sim` at a time, so two runs writing the same
//! directory never end with one's timeline beside the other's charts.

use std::fs::{File, TryLockError};
use std::path::Path;

/// An advisory lock (`flock`) on an output directory, held until dropped (or the process ends,
/// however it ends: the kernel releases it). It locks the directory itself, so nothing is left in
/// it; only other `sim` processes honour it.
#[must_use = "the directory is locked only while this is held"]
#[derive(Debug)]
pub struct DirLock {
    _dir: File,
}

/// [`prepare`]s `dir` and locks it for this process; a directory another `sim` holds is refused
/// at once (no waiting: the other run may last hours), naming the option.
pub fn prepare_locked(dir: &Path, flag: &str) -> Result<DirLock, String> {
    prepare(dir, flag)?;
    let shown = dir.display();
    let handle = File::open(dir).map_err(|e| format!("{flag} {shown}: cannot open the directory to lock it: {e}"))?;
    match handle.try_lock() {
        Ok(()) => Ok(DirLock { _dir: handle }),
        Err(TryLockError::WouldBlock) => Err(format!(
            "{flag} {shown}: another sim is writing into this directory; wait for it to finish, or name another directory"
        )),
        Err(TryLockError::Error(e)) => Err(format!("{flag} {shown}: cannot lock the directory: {e}")),
    }
}

/// Makes sure `dir` is a directory that exists (created if absent) and in which a file can be
/// written. `flag` names the option in the message (`--report`, `--out`).
pub fn prepare(dir: &Path, flag: &str) -> Result<(), String> {
    let shown = dir.display();
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "{flag} {shown}: exists and is not a directory; name a directory (it is created if absent)"
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{flag} {shown}: cannot create the directory: {e}"))?;
    // Creating succeeds on a directory that exists read-only; only a write proves we can.
    let probe = dir.join(format!(".sim-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| format!("{flag} {shown}: cannot write in the directory: {e}"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_directory_is_created_and_a_file_is_refused() {
        let base = std::env::temp_dir().join(format!("locksim-out-dir-{}", std::process::id()));
        let dir = base.join("a/b");
        prepare(&dir, "--out").expect("created");
        assert!(dir.is_dir());
        assert!(std::fs::read_dir(&dir).unwrap().next().is_none(), "the probe file is removed");
        let file = base.join("file");
        std::fs::write(&file, "x").unwrap();
        let err = prepare(&file, "--report").unwrap_err();
        assert!(err.starts_with("--report ") && err.contains("not a directory"), "{err}");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_locked_directory_is_refused_until_released() {
        let dir = std::env::temp_dir().join(format!("locksim-out-dir-lock-{}", std::process::id()));
        let first = prepare_locked(&dir, "--report").expect("the first writer locks it");
        let err = prepare_locked(&dir, "--report").unwrap_err();
        assert!(err.contains("another sim is writing into this directory"), "{err}");
        drop(first);
        let again = prepare_locked(&dir, "--report").expect("free again once released");
        assert!(std::fs::read_dir(&dir).unwrap().next().is_none(), "the lock leaves no file behind");
        drop(again);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_that_cannot_be_written_is_refused() {
        // /proc/self exists and is a directory, but nothing can be created in it (even as root).
        let dir = Path::new("/proc/self");
        if dir.is_dir() {
            let err = prepare(dir, "--out").unwrap_err();
            assert!(err.contains("cannot write in the directory"), "{err}");
        }
    }
}
