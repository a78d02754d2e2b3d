//! What survives a crash, as a type. Every process and client library declares its durable part
//! ([`Durable::Disk`]: what the real system has on disk after a crash of that kind, and the
//! configuration it is started with). A crash consumes the process into that part
//! ([`Durable::into_disk`]) and the node comes back built whole from it
//! ([`Durable::from_disk`]), as at its first start; the engine then calls `on_restart`. A
//! volatile field cannot outlive a crash: there is no reset to forget, only a constructor whose
//! struct literal the compiler checks for every field. (stateright's `Storage` is the same idea:
//! what is saved is a value of its own type, and a restart sees only that value.)
//!
//! A process crash (`kill -9`) keeps what the program had handed to the OS (an AOF in the page
//! cache), a machine crash only what was fsynced: `into_disk` is told which through
//! [`Crash::kind`].
//!
//! The engine reaches a node through [`Rebuild`], a supertrait of `Process` and `LockClient` that
//! every `Durable + Clone` type has: a type that does not declare its disk is not a process.

use crate::time::Nanos;

/// How a node went down (`[[faults]] kind = "crash"`, `mode = "process" | "machine"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CrashKind {
    /// The process was killed (`kill -9`, an OOM kill, a crash): the OS closes its connections,
    /// so every peer with a connection to it gets a reset at once (`Process::on_reset`), and
    /// a message sent to it while it is down is refused the same way. What it had written to
    /// the OS (an AOF in the page cache) survives.
    #[default]
    Process,
    /// The host lost power or dropped off the network: nothing is closed and nobody is told;
    /// peers learn only through their own timeouts. Only what was fsynced survives. After the
    /// restart, a message on a connection opened before the crash is refused with a reset.
    Machine,
}

impl CrashKind {
    /// Every mode, as the scenario format names them.
    pub const NAMES: &'static [&'static str] = &["process", "machine"];

    /// Its name in the scenario format.
    pub fn name(self) -> &'static str {
        match self {
            CrashKind::Process => "process",
            CrashKind::Machine => "machine",
        }
    }

    /// The mode with this name.
    pub fn parse(name: &str) -> Option<CrashKind> {
        match name {
            "process" => Some(CrashKind::Process),
            "machine" => Some(CrashKind::Machine),
            _ => None,
        }
    }
}

/// What a crash handler is told: the kind of crash and the node's clock readings at that moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crash {
    /// How the node went down (the `crash` fault's `mode`).
    pub kind: CrashKind,
    /// The node's monotonic clock when it went down.
    pub mono_ns: Nanos,
    /// The node's wall clock when it went down.
    pub wall_ns: i64,
}

/// A process (or client library) whose crash keeps only its declared durable part.
///
/// Convention: the type's constructor is `from_disk` of the initial disk, so a restart builds
/// the volatile state exactly as the first start did.
pub trait Durable: Sized {
    /// What survives a crash: the data the real system keeps on disk (per its persistence setting
    /// and the crash's kind) and the configuration the process is started with.
    type Disk;
    /// The crash: the process is gone, and this is what its disk holds.
    fn into_disk(self, crash: &Crash) -> Self::Disk;
    /// The process as it boots from `disk`, before `on_restart` runs; also how the first start
    /// builds it.
    fn from_disk(disk: Self::Disk) -> Self;
}

/// A crash in place, through a `dyn Process` or `dyn LockClient`: given to every
/// `Durable + Clone` type, never written by hand.
pub trait Rebuild {
    /// The node crashed: it becomes what [`Durable::from_disk`] builds from what
    /// [`Durable::into_disk`] kept. (The clone is the price of doing it behind `&mut`; it is paid
    /// once per crash.)
    fn rebuild(&mut self, crash: &Crash);
}

impl<T: Durable + Clone> Rebuild for T {
    fn rebuild(&mut self, crash: &Crash) {
        *self = T::from_disk(self.clone().into_disk(crash));
    }
}

/// Declares that all of a type's state survives a crash (`Disk` is the type itself): a store that is
/// all disk, or a test's fake with nothing to lose. `locksim_simulator::durable_whole!(Fake);`
#[macro_export]
macro_rules! durable_whole {
    ($t:ty) => {
        impl $crate::durable::Durable for $t {
            type Disk = $t;
            fn into_disk(self, _crash: &$crate::durable::Crash) -> $t {
                self
            }
            fn from_disk(disk: $t) -> $t {
                disk
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::durable::CrashKind;

    /// A toy with one durable and one volatile field.
    #[derive(Clone, Debug, PartialEq)]
    struct Toy {
        written: u32,
        cached: u32,
    }

    impl Durable for Toy {
        type Disk = u32;
        fn into_disk(self, crash: &Crash) -> u32 {
            match crash.kind {
                CrashKind::Process => self.written,
                CrashKind::Machine => 0,
            }
        }
        fn from_disk(written: u32) -> Toy {
            Toy { written, cached: 0 }
        }
    }

    fn crash(kind: CrashKind) -> Crash {
        Crash { kind, mono_ns: 0, wall_ns: 0 }
    }

    #[test]
    fn a_rebuild_keeps_the_disk_and_rebuilds_the_rest() {
        let mut toy = Toy { written: 7, cached: 9 };
        toy.rebuild(&crash(CrashKind::Process));
        assert_eq!(toy, Toy { written: 7, cached: 0 });
        let mut toy = Toy { written: 7, cached: 9 };
        toy.rebuild(&crash(CrashKind::Machine));
        assert_eq!(toy, Toy { written: 0, cached: 0 });
    }
}
