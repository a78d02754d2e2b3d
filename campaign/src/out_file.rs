//! Output files (`--json FILE`, `--trace FILE`, `--history FILE`, `sim shrink --out FILE`):
//! checked before any work runs, by the rules every output is written by
//! ([`locksim_reports::resolve_output`]): a regular file or a new one in a directory that exists
//! and can be written, a symbolic link to one of those, a character device, a FIFO or `-`. An
//! output that is one of the command's input files, or two outputs that are one file, are
//! refused: the run would overwrite its own scenario, or one output the other.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use locksim_reports::{resolve_output, OutputTarget};

use crate::error::CommandError;

/// Checks that `path` can be written by the output rules; `flag` names the option in the message.
pub fn check(path: &Path, flag: &str) -> Result<(), CommandError> {
    let refuse = |why: String| CommandError::bad_input(format!("{flag} {}: {why}", path.display()));
    match resolve_output(path).map_err(|e| refuse(e.to_string()))? {
        OutputTarget::Stdout => Ok(()),
        // A FIFO is not opened here: opening it for writing waits for a reader.
        OutputTarget::Direct(target) if is_fifo(&target) => Ok(()),
        OutputTarget::Direct(target) => std::fs::OpenOptions::new()
            .append(true)
            .open(&target)
            .map(drop)
            .map_err(|e| refuse(format!("cannot be opened for writing: {e}"))),
        OutputTarget::Replace(target) => {
            // The file is replaced by a rename in its directory: that directory must be writable.
            let dir = target.parent().unwrap_or(Path::new("/"));
            let probe = dir.join(format!(".sim-write-check-{}", std::process::id()));
            std::fs::write(&probe, b"")
                .map_err(|e| refuse(format!("cannot write in the directory {}: {e}", dir.display())))?;
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
    }
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Refuses an output (`(flag, path)`) that resolves to one of `inputs` (by device and inode, so
/// every spelling, symbolic link and hard link counts), and two outputs that resolve to one file.
/// Standard output, devices and FIFOs are left alone (writing them destroys nothing).
pub fn check_distinct(outputs: &[(&str, &Path)], inputs: &[&Path]) -> Result<(), CommandError> {
    let mut seen: Vec<(&str, &Path, PathBuf)> = Vec::new();
    for &(flag, path) in outputs {
        let Ok(OutputTarget::Replace(target)) = resolve_output(path) else { continue };
        if let Ok(out_meta) = std::fs::metadata(&target) {
            for input in inputs {
                let same =
                    std::fs::metadata(input).is_ok_and(|m| m.dev() == out_meta.dev() && m.ino() == out_meta.ino());
                if same {
                    return Err(CommandError::bad_input(format!(
                        "{flag} {}: is the input file {}; writing it would destroy the input: name another file",
                        path.display(),
                        input.display()
                    )));
                }
            }
        }
        if let Some((other, other_path, _)) = seen.iter().find(|(_, _, t)| *t == target) {
            return Err(CommandError::bad_input(format!(
                "{flag} {} and {other} {}: name the same file; one would overwrite the other",
                path.display(),
                other_path.display()
            )));
        }
        seen.push((flag, path, target));
    }
    Ok(())
}

/// [`check`] for every output, then [`check_distinct`]: what each command runs before its work.
pub fn check_all(outputs: &[(&str, Option<&Path>)], inputs: &[&Path]) -> Result<(), CommandError> {
    let given: Vec<(&str, &Path)> = outputs.iter().filter_map(|&(flag, path)| path.map(|p| (flag, p))).collect();
    for &(flag, path) in &given {
        check(path, flag)?;
    }
    check_distinct(&given, inputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("locksim-out-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_missing_directory_or_a_directory_is_refused() {
        let err = check(Path::new("/nonexistent/x.json"), "--json").unwrap_err();
        assert!(
            err.message().starts_with("--json /nonexistent/x.json: the directory /nonexistent does not exist"),
            "{}",
            err.message()
        );
        let err = check(Path::new("/tmp"), "--json").unwrap_err();
        assert!(err.message().contains("is a directory"), "{}", err.message());
        assert!(check(Path::new("/dev/null"), "--json").is_ok());
        assert!(check(Path::new("-"), "--json").is_ok());
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_however_spelled() {
        let dir = temp("input");
        let input = dir.join("x.toml");
        std::fs::write(&input, "name = \"x\"").unwrap();
        std::os::unix::fs::symlink("x.toml", dir.join("link.toml")).unwrap();
        std::fs::hard_link(&input, dir.join("hard.toml")).unwrap();
        let spellings = [dir.join("x.toml"), dir.join("./x.toml"), dir.join("link.toml"), dir.join("hard.toml")];
        for out in &spellings {
            let err = check_distinct(&[("--json", out)], &[&input]).unwrap_err();
            assert!(err.message().contains("is the input file"), "{}", err.message());
        }
        let other = dir.join("other.json");
        assert!(check_distinct(&[("--json", &other)], &[&input]).is_ok());
        let err = check_distinct(&[("--json", &other), ("--trace", &dir.join("./other.json"))], &[&input]).unwrap_err();
        assert!(err.message().contains("name the same file"), "{}", err.message());
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "name = \"x\"");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
