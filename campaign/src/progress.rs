//! Progress on stderr while seeds run: a bar when stderr is a terminal; a line every
//! [`LINE_EVERY`] when it is not (a script, a pipe, a CI log: a long sweep is not silent), or
//! whenever `--progress` asks for lines; nothing with `--quiet`. Results never go here: the
//! table and files are the same whatever is shown.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::rows::Progress as SeedsDone;

/// How often a progress line is printed when stderr is not a terminal.
pub const LINE_EVERY: Duration = Duration::from_secs(3);

/// What `--quiet` and `--progress` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A bar on a terminal, lines elsewhere.
    Auto = 0,
    /// Lines, even on a terminal (`--progress`).
    Lines = 1,
    /// Nothing (`--quiet`).
    Quiet = 2,
}

static MODE: AtomicU8 = AtomicU8::new(Mode::Auto as u8);

/// Sets the mode for the whole process, from the command line (the binary's `main`).
pub fn set_mode(quiet: bool, lines: bool) {
    let mode = if quiet {
        Mode::Quiet
    } else if lines {
        Mode::Lines
    } else {
        Mode::Auto
    };
    MODE.store(mode as u8, Ordering::Relaxed);
}

fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        1 => Mode::Lines,
        2 => Mode::Quiet,
        _ => Mode::Auto,
    }
}

/// Progress of `total` steps (seed-runs), shown as the mode and stderr say.
pub struct Progress {
    bar: Option<ProgressBar>,
    lines: Option<Mutex<Lines>>,
}

/// A progress bar or progress lines on stderr, or nothing (see the module header).
pub fn progress_bar(total: u64) -> Progress {
    let terminal = std::io::stderr().is_terminal();
    match mode() {
        Mode::Quiet => Progress { bar: None, lines: None },
        Mode::Auto if terminal => Progress { bar: Some(bar(total)), lines: None },
        Mode::Auto | Mode::Lines => Progress { bar: None, lines: Some(Mutex::new(Lines::new(total, now()))) },
    }
}

fn bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("[{bar:30}] {pos}/{len} seed-runs  {rate}  eta {eta}  {msg}")
            .expect("valid template")
            // indicatif's own {per_sec} prints four decimals; a whole number reads better.
            .with_key("rate", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0}/s", state.per_sec());
            })
            .progress_chars("=> "),
    );
    bar
}

/// Wall time for the progress lines only: it never reaches a run (determinism rules).
#[allow(clippy::disallowed_methods)]
fn now() -> Instant {
    Instant::now()
}

/// A campaign's progress callback drawing on `progress`: one step a seed, the row and the
/// violations so far as its message.
pub fn shown_on(progress: &Progress) -> impl FnMut(SeedsDone) + '_ {
    |p: SeedsDone| {
        progress.set_message(format!("running {}; seed-runs with violations so far: {}", p.label, p.violating_runs));
        progress.inc(1);
    }
}

impl Progress {
    /// `n` more steps done.
    pub fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
        if let Some(lines) = &self.lines {
            let line = lines.lock().map(|mut l| l.step(n, now())).unwrap_or(None);
            if let Some(line) = line {
                eprintln!("{line}");
            }
        }
    }

    /// What is running, shown after the counts.
    pub fn set_message(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message.clone());
        }
        if let Some(lines) = &self.lines {
            if let Ok(mut l) = lines.lock() {
                l.message = message;
            }
        }
    }

    /// The number of steps, once known (a sweep learns it after reading its progress record).
    pub fn set_length(&self, total: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(total);
        }
        if let Some(lines) = &self.lines {
            if let Ok(mut l) = lines.lock() {
                l.total = total;
            }
        }
    }

    /// Done: the bar is cleared; after progress lines, a last one with the time taken.
    pub fn finish_and_clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if let Some(lines) = &self.lines {
            let line = lines.lock().map(|l| l.last(now())).unwrap_or(None);
            if let Some(line) = line {
                eprintln!("{line}");
            }
        }
    }
}

/// The state behind progress lines: steps done, when the last line went out.
#[derive(Debug)]
struct Lines {
    total: u64,
    done: u64,
    message: String,
    started: Instant,
    last_line: Instant,
    printed: bool,
}

impl Lines {
    fn new(total: u64, now: Instant) -> Self {
        Self { total, done: 0, message: String::new(), started: now, last_line: now, printed: false }
    }

    /// Records `n` steps at `now`; the line to print when [`LINE_EVERY`] has passed since the last.
    fn step(&mut self, n: u64, now: Instant) -> Option<String> {
        self.done += n;
        if now.duration_since(self.last_line) < LINE_EVERY {
            return None;
        }
        self.last_line = now;
        self.printed = true;
        let elapsed = now.duration_since(self.started).as_secs_f64();
        let rate = if elapsed > 0.0 { self.done as f64 / elapsed } else { 0.0 };
        let pct = if self.total > 0 {
            format!(" ({:.0}%)", 100.0 * self.done as f64 / self.total as f64)
        } else {
            String::new()
        };
        let eta = if rate > 0.0 && self.total > self.done {
            format!(", about {:.0} s to go", (self.total - self.done) as f64 / rate)
        } else {
            String::new()
        };
        let message = if self.message.is_empty() { String::new() } else { format!("; {}", self.message) };
        Some(format!(
            "progress: {}/{} seed-runs{pct} after {elapsed:.0} s, {rate:.0}/s{eta}{message}",
            self.done, self.total
        ))
    }

    /// The closing line, only when a progress line was printed (a short run stays silent).
    fn last(&self, now: Instant) -> Option<String> {
        self.printed.then(|| {
            format!(
                "progress: {}/{} seed-runs done in {:.1} s",
                self.done,
                self.total,
                now.duration_since(self.started).as_secs_f64()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line every [`LINE_EVERY`], none before the first interval, a closing line only after
    /// one was printed.
    #[test]
    fn lines_come_every_few_seconds_and_a_short_run_stays_silent() {
        let t0 = now();
        let mut quick = Lines::new(10, t0);
        assert_eq!(quick.step(10, t0 + Duration::from_millis(200)), None);
        assert_eq!(quick.last(t0 + Duration::from_millis(250)), None);

        let mut slow = Lines::new(100, t0);
        slow.message = "running db".to_string();
        assert_eq!(slow.step(10, t0 + Duration::from_secs(1)), None);
        let line = slow.step(20, t0 + LINE_EVERY).expect("a line after the interval");
        assert_eq!(line, "progress: 30/100 seed-runs (30%) after 3 s, 10/s, about 7 s to go; running db");
        assert_eq!(slow.step(1, t0 + LINE_EVERY + Duration::from_secs(1)), None, "not again at once");
        assert!(slow.step(69, t0 + LINE_EVERY * 2).unwrap().starts_with("progress: 100/100 seed-runs (100%)"));
        assert_eq!(slow.last(t0 + Duration::from_secs(7)).unwrap(), "progress: 100/100 seed-runs done in 7.0 s");
    }
}
