//! `sim sweep`'s record of finished points, so `--resume` can skip them: `DIR/sweep-progress.jsonl`
//! (`DIR/shard-K-of-N.progress.jsonl` for a shard). Its first line is a header saying what sweep
//! it belongs to ([`Origin`]: version, scenario text, seeds, `--algorithm`s and `--param`s, and
//! the shard); each later line is one finished point's exact row states ([`PointState`]),
//! appended as soon as the point completes, in point order.
//!
//! Appending one line per point (not rewriting the file) keeps the cost linear in the points. A
//! line cut short by a crash is the last one and does not parse: a resume drops it (that point
//! runs again) and rewrites the file without it, atomically, before appending more.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::shard::{Origin, PointState, Shard, FORMAT};

/// `kind` of a progress file's header.
pub const KIND_PROGRESS: &str = "locksim-sweep-progress";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Header {
    kind: String,
    format: u32,
    #[serde(flatten)]
    origin: Origin,
    shard: Option<Shard>,
}

/// The progress file's name in the sweep's directory.
pub fn file_name(shard: Option<Shard>) -> String {
    match shard {
        None => "sweep-progress.jsonl".into(),
        Some(s) => format!("shard-{}-of-{}.progress.jsonl", s.index, s.count),
    }
}

/// An open progress file that finished points are appended to.
pub struct Progress {
    path: PathBuf,
    file: File,
}

fn line<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string(value).expect("a progress line serialises");
    s.push('\n');
    s
}

impl Progress {
    /// Starts a fresh record in `dir` (replacing any earlier one) for the sweep `origin`.
    pub fn start(dir: &Path, origin: &Origin, shard: Option<Shard>) -> Result<Progress, String> {
        let header = Header { kind: KIND_PROGRESS.into(), format: FORMAT, origin: origin.clone(), shard };
        Self::rewrite(&dir.join(file_name(shard)), &line(&header))
    }

    fn rewrite(path: &Path, text: &str) -> Result<Progress, String> {
        locksim_charts::write_atomic(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot append to {}: {e}", path.display()))?;
        Ok(Progress { path: path.to_path_buf(), file })
    }

    /// Reopens the record in `dir` for `--resume`: the points it holds, in order (a prefix of the
    /// sweep's points), and the file to append the next ones to. No record: `Ok(None)` (the
    /// sweep starts from its first point). A record of another sweep (scenario text, version,
    /// seeds, `--algorithm`s, `--param`s or shard) is refused, naming what differs.
    pub fn resume(
        dir: &Path,
        origin: &Origin,
        shard: Option<Shard>,
    ) -> Result<Option<(Progress, Vec<PointState>)>, String> {
        let path = dir.join(file_name(shard));
        let name = path.display();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("--resume: cannot read {name}: {e}")),
        };
        let mut lines = text.split_inclusive('\n');
        let head = lines.next().unwrap_or("");
        let header: Header = serde_json::from_str(head)
            .map_err(|e| format!("--resume: {name} is not a sweep progress record ({e}); remove it to start afresh"))?;
        if header.kind != KIND_PROGRESS || header.format != FORMAT {
            return Err(format!(
                "--resume: {name} is a {:?} record of format {}; this sim writes {KIND_PROGRESS:?} format {FORMAT}",
                header.kind, header.format
            ));
        }
        if let Some(why) = header.origin.difference(origin) {
            // `difference` describes its argument against the receiver: here, this sweep
            // against the record.
            return Err(format!(
                "--resume: {name} records another sweep: this one has {why}; resume with the same scenario, --seeds, --algorithm and --param, or drop --resume"
            ));
        }
        if header.shard != shard {
            let show = |s: Option<Shard>| s.map_or("no shard".to_string(), |s| format!("shard {s}"));
            return Err(format!("--resume: {name} records {}, this sweep is {}", show(header.shard), show(shard)));
        }
        let mut kept = head.to_string();
        let mut points: Vec<PointState> = Vec::new();
        for l in lines {
            // A line without its newline was cut short by a crash; so is one that does not parse.
            let Some(point) = l.strip_suffix('\n').and_then(|l| serde_json::from_str::<PointState>(l).ok()) else {
                break;
            };
            if point.point != points.len() {
                break;
            }
            kept.push_str(l);
            points.push(point);
        }
        let progress = if kept.len() == text.len() {
            let file = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .map_err(|e| format!("cannot append to {name}: {e}"))?;
            Progress { path: path.clone(), file }
        } else {
            Self::rewrite(&path, &kept)?
        };
        Ok(Some((progress, points)))
    }

    /// Appends a finished point (points must come in order).
    pub fn record(&mut self, point: &PointState) -> Result<(), String> {
        self.file
            .write_all(line(point).as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|e| format!("cannot append to {}: {e}", self.path.display()))
    }

    /// Where the record is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("locksim-progress-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn origin(text: &str) -> Origin {
        Origin::new("0.1.0", "s.toml", text, 0..4, &[], &["workload.clients=2,3".into()])
    }

    #[test]
    fn records_resume_and_a_torn_line_is_dropped() {
        let d = dir("torn");
        assert!(Progress::resume(&d, &origin("x"), None).unwrap().is_none());
        let mut p = Progress::start(&d, &origin("x"), None).unwrap();
        p.record(&PointState { point: 0, rows: vec![] }).unwrap();
        p.record(&PointState { point: 1, rows: vec![] }).unwrap();
        drop(p);
        // A crash in the middle of the third line.
        let path = d.join("sweep-progress.jsonl");
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"point\":2,\"ro").unwrap();
        drop(f);
        let (mut p, points) = Progress::resume(&d, &origin("x"), None).unwrap().unwrap();
        assert_eq!(points.iter().map(|p| p.point).collect::<Vec<_>>(), [0, 1]);
        p.record(&PointState { point: 2, rows: vec![] }).unwrap();
        let (_, points) = Progress::resume(&d, &origin("x"), None).unwrap().unwrap();
        assert_eq!(points.len(), 3);
    }

    #[test]
    fn another_sweep_is_refused_naming_the_difference() {
        let d = dir("other");
        Progress::start(&d, &origin("x"), None).unwrap();
        let e = Progress::resume(&d, &origin("y"), None).err().unwrap();
        assert!(e.contains("a different scenario text"), "{e}");
        let mut o = origin("x");
        o.params = vec!["workload.clients=2,4".into()];
        let e = Progress::resume(&d, &o, None).err().unwrap();
        assert!(e.contains("--param workload.clients=2,4, not workload.clients=2,3"), "{e}");
        // A shard's record has its own name, so it is simply absent here.
        assert!(Progress::resume(&d, &origin("x"), Some(Shard { index: 0, count: 2 })).unwrap().is_none());
    }
}
