//! Writing an output file all at once: the bytes go to a hidden sibling file that is renamed over
//! the target only when complete, so an interrupted run (a crash, a kill, a full disk) never
//! leaves a truncated results file, report or chart where a complete one is expected: the target
//! holds either its previous content or the new one. Every output of `sim` is written this way.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The hidden sibling a file is written to before it replaces `path`: `.NAME.partial-PID.EXT`,
/// keeping the extension (the PNG encoder picks the format from it).
pub fn partial_path(path: &Path) -> PathBuf {
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = path.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    path.with_file_name(format!(".{name}.partial-{}{ext}", std::process::id()))
}

/// Writes `bytes` to `path` atomically: to [`partial_path`], flushed to disk, then renamed over
/// `path` (a rename within one directory replaces the target in one step). On failure the
/// partial file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    let partial = partial_path(path);
    let written = (|| {
        let mut f = fs::File::create(&partial)?;
        f.write_all(bytes.as_ref())?;
        f.sync_all()?;
        fs::rename(&partial, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&partial);
    }
    written
}

/// Moves a file drawn at [`partial_path`] into place (for writers that take a path, such as
/// the PNG encoder); removes it on failure.
pub fn commit_partial(path: &Path) -> io::Result<()> {
    let partial = partial_path(path);
    let moved = fs::rename(&partial, path);
    if moved.is_err() {
        let _ = fs::remove_file(&partial);
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_target_whole_and_leaves_no_partial_file() {
        let dir = std::env::temp_dir().join(format!("locksim-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("results.json");
        fs::write(&target, "old").unwrap();
        write_atomic(&target, "new content").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new content");
        let names: Vec<String> =
            fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        assert_eq!(names, vec!["results.json".to_string()], "no partial file remains");
        assert!(partial_path(&target).to_string_lossy().ends_with(".json"));
        // A target in a directory that does not exist: an error, and nothing is left behind.
        assert!(write_atomic(&dir.join("missing/x.json"), "x").is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
