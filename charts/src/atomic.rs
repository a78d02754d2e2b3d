//! Writing an output file all at once, without ever replacing what is not ours.
//!
//! A regular file (or a path that does not exist yet) is written to a hidden sibling that is
//! renamed over the target only when complete, so an interrupted run (a crash, a kill, a full
//! disk) never leaves a truncated results file, report or chart where a complete one is
//! expected: the target holds either its previous content or the new one.
//!
//! The rules for a path the user named ([`resolve_output`]):
//! - a symbolic link is followed to its target (a dangling link creates its target), and the
//!   target is written atomically: the link itself is never replaced;
//! - a character device or a FIFO (`/dev/null`, `/dev/stdout`, `/dev/full`, a named pipe) and a
//!   process's descriptor (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`) are opened and written
//!   directly, never renamed over; `-` is standard output;
//! - a directory, a socket or a block device is refused.
//!
//! Every output of `sim` is written this way.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};

/// Symbolic links followed before giving up (the kernel's own limit is 40).
const MAX_LINKS: usize = 40;

/// Where the bytes for a user-named output path go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// `-`: standard output.
    Stdout,
    /// A character device, a FIFO or a process's descriptor: opened and written in place (never
    /// created, never renamed over).
    Direct(PathBuf),
    /// A regular file, or a path that does not exist yet: written atomically at this path (the
    /// end of any chain of symbolic links, its directory resolved).
    Replace(PathBuf),
}

/// Decides where `path`'s bytes go, following symbolic links; refuses a directory, a socket or a
/// block device, and a path whose directory does not exist.
pub fn resolve_output(path: &Path) -> io::Result<OutputTarget> {
    if path.as_os_str() == "-" {
        return Ok(OutputTarget::Stdout);
    }
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let Some(name) = current.file_name().map(|n| n.to_os_string()) else {
            // `/`, `..`, `dir/..`: names a directory.
            return Err(refusal(path, io::ErrorKind::IsADirectory, "is a directory; name a file"));
        };
        if matches!(current.components().next_back(), Some(Component::CurDir | Component::ParentDir)) {
            return Err(refusal(path, io::ErrorKind::IsADirectory, "is a directory; name a file"));
        }
        let parent = current.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let dir = fs::canonicalize(parent).map_err(|e| {
            let why = if e.kind() == io::ErrorKind::NotFound {
                format!("the directory {} does not exist", parent.display())
            } else {
                format!("the directory {}: {e}", parent.display())
            };
            io::Error::new(e.kind(), why)
        })?;
        if !dir.is_dir() {
            return Err(refusal(
                path,
                io::ErrorKind::NotADirectory,
                &format!("{} is not a directory", parent.display()),
            ));
        }
        // A process's descriptors (what /dev/stdout and /dev/fd/N lead to) link to objects that
        // are not paths (`pipe:[…]`): opened as they are, the kernel follows them.
        if dir.starts_with("/proc") {
            return Ok(OutputTarget::Direct(path.to_path_buf()));
        }
        let full = dir.join(&name);
        let meta = match fs::symlink_metadata(&full) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(OutputTarget::Replace(full)),
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            // A relative link is relative to the link's own directory.
            current = dir.join(fs::read_link(&full)?);
        } else if kind.is_file() {
            return Ok(OutputTarget::Replace(full));
        } else if kind.is_char_device() || kind.is_fifo() {
            return Ok(OutputTarget::Direct(full));
        } else if kind.is_dir() {
            return Err(refusal(path, io::ErrorKind::IsADirectory, "is a directory; name a file"));
        } else {
            let what = if kind.is_socket() { "a socket" } else { "a block device" };
            return Err(refusal(
                path,
                io::ErrorKind::InvalidInput,
                &format!("is {what}; name a regular file, a character device (/dev/null) or a FIFO"),
            ));
        }
    }
    Err(refusal(path, io::ErrorKind::InvalidInput, &format!("more than {MAX_LINKS} symbolic links to follow")))
}

/// An error saying why `_path` cannot be an output (the caller's message names the path).
fn refusal(_path: &Path, kind: io::ErrorKind, why: &str) -> io::Error {
    io::Error::new(kind, why.to_string())
}

/// The hidden sibling a file is written to before it replaces `path`: `.NAME.partial-PID.EXT`,
/// keeping the extension (the PNG encoder picks the format from it).
pub fn partial_path(path: &Path) -> PathBuf {
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = path.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    path.with_file_name(format!(".{name}.partial-{}{ext}", std::process::id()))
}

/// Writes `bytes` to the user-named `path` by the rules above: a regular file (or a new one, or
/// the target of a symbolic link) atomically, through [`partial_path`] beside it, flushed to disk
/// and renamed over it (on failure the partial file is removed and the target is untouched); a
/// character device, a FIFO or `-` directly; anything else refused.
pub fn write_atomic(path: &Path, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    match resolve_output(path)? {
        OutputTarget::Stdout => {
            let mut out = io::stdout().lock();
            out.write_all(bytes.as_ref())?;
            out.flush()
        }
        OutputTarget::Direct(target) => {
            // Appending: through /dev/stdout redirected to a file, what was printed before stays.
            let mut f = fs::OpenOptions::new().append(true).open(target)?;
            f.write_all(bytes.as_ref())?;
            f.flush()
        }
        OutputTarget::Replace(target) => replace(&target, bytes.as_ref()),
    }
}

/// Writes `bytes` beside the regular file `target` and renames them over it.
fn replace(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let partial = partial_path(target);
    let written = (|| {
        let mut f = fs::File::create(&partial)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        // Checked again just before the rename: never rename over anything but a regular file
        // (something may have been put there since the path was resolved).
        match fs::symlink_metadata(target) {
            Ok(meta) if !meta.file_type().is_file() => {
                return Err(io::Error::new(io::ErrorKind::AlreadyExists, "is no longer a regular file; not replaced"))
            }
            _ => {}
        }
        fs::rename(&partial, target)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&partial);
    }
    written
}

/// Moves a file drawn at [`partial_path`] of `path` (for writers that take a path, such as the
/// PNG encoder) into place by the rules of [`write_atomic`]; removes the partial file either way.
pub fn commit_partial(path: &Path) -> io::Result<()> {
    let partial = partial_path(path);
    let moved = match resolve_output(path) {
        // The common case: a regular file (or none) where the partial file was drawn.
        Ok(OutputTarget::Replace(target))
            if partial_path(&target) == fs::canonicalize(&partial).unwrap_or_default() =>
        {
            fs::rename(&partial, &target)
        }
        // A link elsewhere, a device or a FIFO: the bytes go through write_atomic.
        Ok(_) => fs::read(&partial).and_then(|bytes| write_atomic(path, bytes)),
        Err(e) => Err(e),
    };
    let _ = fs::remove_file(&partial);
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fresh directory for one test, removed when dropped.
    struct TempDir(PathBuf);
    impl TempDir {
        fn new(name: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!("locksim-atomic-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
        fn names(&self) -> Vec<String> {
            let mut names: Vec<String> =
                fs::read_dir(&self.0).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
            names.sort();
            names
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn replaces_the_target_whole_and_leaves_no_partial_file() {
        let dir = TempDir::new("replace");
        let target = dir.0.join("results.json");
        fs::write(&target, "old").unwrap();
        write_atomic(&target, "new content").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new content");
        assert_eq!(dir.names(), vec!["results.json".to_string()], "no partial file remains");
        assert!(partial_path(&target).to_string_lossy().ends_with(".json"));
        // A target in a directory that does not exist: an error, and nothing is left behind.
        let err = write_atomic(&dir.0.join("missing/x.json"), "x").unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
    }

    #[test]
    fn a_symbolic_link_is_written_through_and_stays_a_link() {
        let dir = TempDir::new("link");
        fs::create_dir(dir.0.join("real")).unwrap();
        let target = dir.0.join("real/results.json");
        fs::write(&target, "old").unwrap();
        // A relative link, reached through a second link.
        symlink("real/results.json", dir.0.join("link.json")).unwrap();
        symlink(dir.0.join("link.json"), dir.0.join("link2.json")).unwrap();
        write_atomic(&dir.0.join("link2.json"), "new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        for link in ["link.json", "link2.json"] {
            assert!(fs::symlink_metadata(dir.0.join(link)).unwrap().file_type().is_symlink(), "{link} is still a link");
        }
        assert_eq!(dir.names(), vec!["link.json", "link2.json", "real"]);
        assert_eq!(fs::read_dir(dir.0.join("real")).unwrap().count(), 1, "no partial file beside the target");
        // A dangling link creates its target, as a shell's `>` does.
        symlink("real/new.json", dir.0.join("dangling.json")).unwrap();
        write_atomic(&dir.0.join("dangling.json"), "created").unwrap();
        assert_eq!(fs::read_to_string(dir.0.join("real/new.json")).unwrap(), "created");
        assert!(fs::symlink_metadata(dir.0.join("dangling.json")).unwrap().file_type().is_symlink());
        // A loop is an error, not a hang.
        symlink("loop-b", dir.0.join("loop-a")).unwrap();
        symlink("loop-a", dir.0.join("loop-b")).unwrap();
        assert!(write_atomic(&dir.0.join("loop-a"), "x").unwrap_err().to_string().contains("symbolic links"));
    }

    #[test]
    fn devices_and_fifos_are_written_in_place_and_never_replaced() {
        assert_eq!(resolve_output(Path::new("-")).unwrap(), OutputTarget::Stdout);
        assert_eq!(resolve_output(Path::new("/dev/null")).unwrap(), OutputTarget::Direct("/dev/null".into()));
        write_atomic(Path::new("/dev/null"), "discarded").unwrap();
        assert!(fs::metadata("/dev/null").unwrap().file_type().is_char_device());
        // /dev/stdout leads to this process's descriptor: written in place, whatever fd 1 is.
        assert!(matches!(resolve_output(Path::new("/dev/stdout")).unwrap(), OutputTarget::Direct(_)));
        // /dev/full: the write fails (no space); the device node must stay a device. Its path is
        // resolved first so that, were it to be replaced, the test stops before writing.
        assert_eq!(resolve_output(Path::new("/dev/full")).unwrap(), OutputTarget::Direct("/dev/full".into()));
        let err = write_atomic(Path::new("/dev/full"), "x".repeat(1 << 16)).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(28), "ENOSPC: {err}");
        assert!(fs::metadata("/dev/full").unwrap().file_type().is_char_device());

        let dir = TempDir::new("fifo");
        let fifo = dir.0.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        // The reader is another process: opening a FIFO for writing waits for one.
        let reader = std::process::Command::new("cat").arg(&fifo).stdout(std::process::Stdio::piped()).spawn().unwrap();
        write_atomic(&fifo, "through the pipe").unwrap();
        assert_eq!(reader.wait_with_output().unwrap().stdout, b"through the pipe");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is still a FIFO");
        assert_eq!(dir.names(), vec!["pipe"]);
    }

    #[test]
    fn directories_and_sockets_are_refused() {
        let dir = TempDir::new("refused");
        let sub = dir.0.join("sub");
        fs::create_dir(&sub).unwrap();
        let err = write_atomic(&sub, "x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory, "{err}");
        assert!(sub.is_dir());
        symlink("sub", dir.0.join("to-dir")).unwrap();
        assert_eq!(write_atomic(&dir.0.join("to-dir"), "x").unwrap_err().kind(), io::ErrorKind::IsADirectory);
        let socket = dir.0.join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let err = write_atomic(&socket, "x").unwrap_err();
        assert!(err.to_string().contains("a socket"), "{err}");
        assert!(fs::symlink_metadata(&socket).unwrap().file_type().is_socket());
        assert_eq!(dir.names(), vec!["sock", "sub", "to-dir"], "nothing else was written");
    }

    #[test]
    fn a_partial_png_goes_through_a_link() {
        let dir = TempDir::new("commit");
        fs::create_dir(dir.0.join("real")).unwrap();
        symlink("real/chart.png", dir.0.join("chart.png")).unwrap();
        let png = dir.0.join("chart.png");
        fs::write(partial_path(&png), "png bytes").unwrap();
        commit_partial(&png).unwrap();
        assert_eq!(fs::read_to_string(dir.0.join("real/chart.png")).unwrap(), "png bytes");
        assert!(fs::symlink_metadata(&png).unwrap().file_type().is_symlink());
        assert_eq!(dir.names(), vec!["chart.png", "real"]);
        let plain = dir.0.join("real/plain.png");
        fs::write(partial_path(&plain), "plain").unwrap();
        commit_partial(&plain).unwrap();
        assert_eq!(fs::read_to_string(&plain).unwrap(), "plain");
    }
}
