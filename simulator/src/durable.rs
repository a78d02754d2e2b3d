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
//! Compatibility, while some models still reset by hand in `on_crash`: a migrated type writes
//! [`rebuilt_on_crash!()`](crate::rebuilt_on_crash) in its `impl Process` or `impl LockClient`,
//! which writes the `on_crash` that rebuilds it from its disk ([`rebuild`]).

use crate::process::Crash;

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

/// Crashes `node` in place: it becomes what [`Durable::from_disk`] builds from what
/// [`Durable::into_disk`] kept. (The clone is the price of doing it behind `&mut`, paid once per
/// crash, and only on the compatibility path.)
pub fn rebuild<T: Durable + Clone>(node: &mut T, crash: &Crash) {
    *node = T::from_disk(node.clone().into_disk(crash));
}

/// Inside `impl Process<P> for T` or `impl LockClient<P> for T` of a `T: Durable + Clone`: writes
/// the `on_crash` that rebuilds `T` from its disk (the compatibility path while the traits still
/// have `on_crash`; see the module header).
#[macro_export]
macro_rules! rebuilt_on_crash {
    () => {
        fn on_crash(&mut self, crash: &$crate::process::Crash) {
            $crate::durable::rebuild(self, crash)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::CrashKind;

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
        rebuild(&mut toy, &crash(CrashKind::Process));
        assert_eq!(toy, Toy { written: 7, cached: 0 });
        let mut toy = Toy { written: 7, cached: 9 };
        rebuild(&mut toy, &crash(CrashKind::Machine));
        assert_eq!(toy, Toy { written: 0, cached: 0 });
    }
}
