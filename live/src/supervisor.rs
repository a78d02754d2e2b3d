//! Every process a live run starts (servers and clients), by pid: pausing (SIGSTOP / SIGCONT),
//! killing (SIGKILL) and, when the supervisor is dropped (the run ended, failed or was
//! interrupted), stopping every one still running and reaping it. Nothing is left behind, even
//! when `sim` itself is killed with SIGKILL (no handler, no destructor runs): every process is
//! started through `sim live-exec`, which asks the kernel to kill it when the thread that started
//! it ends (`PR_SET_PDEATHSIG`), then becomes the server program (the pid stays the same, so
//! pausing and killing by pid are unchanged).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// The program whose `live-exec` subcommand starts servers (the running `sim`), once set.
static EXEC_WRAPPER: OnceLock<PathBuf> = OnceLock::new();

/// Starts every server from now on through `sim_binary live-exec`, so that it dies with the
/// thread that started it even if `sim` is killed outright. The thread that calls
/// [`crate::servers::Server::start`] must then live as long as the servers should (live runs
/// start them from the command's own thread). Without this (a library test), servers are
/// started directly.
pub fn start_servers_through(sim_binary: PathBuf) {
    let _ = EXEC_WRAPPER.set(sim_binary);
}

/// A command that runs `program`: through `sim live-exec` when [`start_servers_through`] was
/// called, else directly. Arguments, directory and standard streams are the caller's to add.
pub fn command_for(program: &str) -> Command {
    match EXEC_WRAPPER.get() {
        Some(sim) => {
            let mut cmd = Command::new(sim);
            cmd.arg("live-exec").arg("--").arg(program);
            cmd
        }
        None => Command::new(program),
    }
}

/// Asks the kernel to SIGKILL this process when the thread that started it ends (a live run's
/// client processes call it first thing; `live-exec` before it becomes a server). If that thread
/// is already gone, the process has been handed to another parent: it exits at once.
pub fn die_with_parent() -> Result<(), String> {
    let parent = nix::unistd::getppid();
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(|e| format!("prctl(PR_SET_PDEATHSIG): {e}"))?;
    // The parent may have died between our start and the prctl: then we were re-parented and no
    // signal will come.
    if nix::unistd::getppid() != parent || parent == Pid::from_raw(1) {
        std::process::exit(1);
    }
    Ok(())
}

/// `sim live-exec -- PROGRAM ARGS…`: [`die_with_parent`], then become PROGRAM. Returns only on
/// failure, with the reason.
pub fn exec_dying_with_parent(command: &[OsString]) -> String {
    let Some((program, args)) = command.split_first() else {
        return "live-exec: no program given".to_string();
    };
    if let Err(e) = die_with_parent() {
        return e;
    }
    let err = Command::new(program).args(args).exec();
    format!("live-exec: cannot run {}: {err}", program.to_string_lossy())
}

/// Every pid any supervisor of this process started and has not yet seen end: what
/// [`kill_every_started_process`] stops when `sim` must quit at once (a second Ctrl-C), where no
/// destructor runs.
static STARTED: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn started() -> std::sync::MutexGuard<'static, Vec<u32>> {
    STARTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills (SIGCONT, then SIGKILL) every process a supervisor started and that may still run. For
/// an exit that skips destructors; the normal end of a run stops its processes itself.
pub fn kill_every_started_process() {
    for pid in started().drain(..) {
        let pid = Pid::from_raw(pid as i32);
        let _ = kill(pid, Signal::SIGCONT);
        let _ = kill(pid, Signal::SIGKILL);
    }
}

fn forget(pid: u32) {
    started().retain(|p| *p != pid);
}

/// A started process: its name in the run and its OS handle.
struct Managed {
    name: String,
    child: Child,
    running: bool,
}

/// The processes of one live run.
#[derive(Default)]
pub struct Supervisor {
    procs: Vec<Managed>,
}

/// A handle on one process the supervisor started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcId(usize);

impl Supervisor {
    /// Starts `cmd` as `name`; its stdin is closed, stdout and stderr as `cmd` sets them.
    pub fn spawn(&mut self, name: &str, cmd: &mut Command) -> Result<ProcId, String> {
        let child = cmd
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {name} ({:?}): {e}", cmd.get_program()))?;
        started().push(child.id());
        self.procs.push(Managed { name: name.to_string(), child, running: true });
        Ok(ProcId(self.procs.len() - 1))
    }

    /// The OS child (to take its stdout).
    pub fn child_mut(&mut self, id: ProcId) -> &mut Child {
        &mut self.procs[id.0].child
    }

    /// The process's pid.
    pub fn pid(&self, id: ProcId) -> u32 {
        self.procs[id.0].child.id()
    }

    /// The process's name.
    pub fn name(&self, id: ProcId) -> &str {
        &self.procs[id.0].name
    }

    fn signal(&self, id: ProcId, sig: Signal) -> Result<(), String> {
        let m = &self.procs[id.0];
        kill(Pid::from_raw(m.child.id() as i32), sig)
            .map_err(|e| format!("{sig} to {} (pid {}): {e}", m.name, m.child.id()))
    }

    /// Stops the process (SIGSTOP): every thread of it halts, as in a long GC pause.
    pub fn pause(&self, id: ProcId) -> Result<(), String> {
        self.signal(id, Signal::SIGSTOP)
    }

    /// Resumes a paused process (SIGCONT).
    pub fn resume(&self, id: ProcId) -> Result<(), String> {
        self.signal(id, Signal::SIGCONT)
    }

    /// Kills the process (SIGKILL: the OS closes its sockets at once) and reaps it.
    pub fn kill(&mut self, id: ProcId) -> Result<(), String> {
        let m = &mut self.procs[id.0];
        if !m.running {
            return Ok(());
        }
        let _ = m.child.kill();
        m.child.wait().map_err(|e| format!("waiting for {} (pid {}): {e}", m.name, m.child.id()))?;
        m.running = false;
        forget(m.child.id());
        Ok(())
    }

    /// Whether the process has exited (reaping it if so).
    pub fn exited(&mut self, id: ProcId) -> bool {
        let m = &mut self.procs[id.0];
        if m.running && matches!(m.child.try_wait(), Ok(Some(_))) {
            m.running = false;
            forget(m.child.id());
        }
        !m.running
    }

    /// Waits for a process to exit by itself, up to `limit`; kills it after that. Returns
    /// whether it exited by itself.
    pub fn wait_or_kill(&mut self, id: ProcId, limit: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        while start.elapsed() < limit {
            if self.exited(id) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.kill(id);
        false
    }

    /// Pids of the processes still running (none after [`Supervisor::stop_all`]).
    pub fn running_pids(&mut self) -> Vec<u32> {
        let mut pids = Vec::new();
        for i in 0..self.procs.len() {
            if !self.exited(ProcId(i)) {
                pids.push(self.procs[i].child.id());
            }
        }
        pids
    }

    /// Every pid this supervisor ever started.
    pub fn all_pids(&self) -> Vec<u32> {
        self.procs.iter().map(|m| m.child.id()).collect()
    }

    /// Kills and reaps every process still running (a paused one is resumed first, so that it
    /// dies now rather than when someone continues it).
    pub fn stop_all(&mut self) {
        for i in 0..self.procs.len() {
            if self.procs[i].running {
                let _ = self.signal(ProcId(i), Signal::SIGCONT);
                let _ = self.kill(ProcId(i));
            }
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.stop_all();
    }
}
