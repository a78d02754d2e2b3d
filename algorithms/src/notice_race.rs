//! The race after a pause between a lock library's notice and the application's own thread on
//! its way to the check before a write (issue 32): Curator's SUSPENDED through the ZooKeeper
//! client's threads, kazoo's listener on its connection thread, clientv3's `Session.Done()`
//! through its goroutines. One mechanism, shared here; each model feeds it the library's delay
//! from noticing to the application seeing the notice (`delivery_ms`) and the application
//! thread's time from its wake-up to its check (`resume_to_check_ms`).
//!
//! In a running process each thread runs at its own time (its timer), so nothing is to decide.
//! After a pause both resume together, each with work overdue: the library notices at the resume
//! (a read timeout or an end of stream, a passed keep-alive deadline) and hands the notice on a
//! drawn `delivery_ms` later (plus any fixed delay of its own: Curator's 100 ms cleanup sleep);
//! the application thread reaches its check a drawn `resume_to_check_ms` after the resume and
//! sees the notice only if it arrived by then. The model makes the check at the resume instant
//! and delivers first the notices that won (time within the draws is not spent).
//!
//! Each model keeps its own notices on their way (Curator's states in order, clientv3's one
//! `Done()`) and its own trace notes; this is the part they share: the two draws, in the order
//! every model makes them (the application's first, then the library's as it notices), and the
//! comparison.

use rand::Rng;

use locksim_simulator::dist::Dist;
use locksim_simulator::time::{ms_to_ns, Nanos};

/// The two sides of the race, as a library preset sets them.
#[derive(Clone, Debug)]
pub struct NoticeRace {
    /// From the library noticing to the application seeing the notice (its listener has run,
    /// its channel is closed), less any fixed delay the model adds itself.
    pub delivery_ms: Dist,
    /// The resumed application thread's time from its wake-up to its check before a write.
    pub resume_to_check_ms: Dist,
}

/// The application thread's check after a resume, as drawn by [`NoticeRace::check_after_resume`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    /// The drawn time from the resume to the check.
    pub app_ns: Nanos,
    /// When the check is made.
    pub at_ns: Nanos,
}

impl Check {
    /// Whether a notice reaching the application at `notice_at_ns` is seen by this check.
    pub fn sees(&self, notice_at_ns: Nanos) -> bool {
        notice_at_ns <= self.at_ns
    }
}

impl NoticeRace {
    /// The library's delivery delay of a notice handed on now: one draw of `delivery_ms`.
    pub fn delivery_ns<R: Rng + ?Sized>(&self, rng: &mut R) -> Nanos {
        ms_to_ns(self.delivery_ms.sample_non_negative(rng))
    }

    /// The check before a write at `now_ns`: a race only after a pause, which shows as the
    /// library's side having something overdue (`library_overdue`: it will notice at the resume)
    /// or a notice already on its way (`notice_pending`). Then the application thread's time is
    /// drawn (before the library notices, so before its delivery is drawn); otherwise nothing is
    /// drawn and `None` says there is no race to run.
    pub fn check_after_resume<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        now_ns: Nanos,
        library_overdue: bool,
        notice_pending: bool,
    ) -> Option<Check> {
        if !library_overdue && !notice_pending {
            return None;
        }
        let app_ns = ms_to_ns(self.resume_to_check_ms.sample_non_negative(rng));
        Some(Check { app_ns, at_ns: now_ns + app_ns })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::mock::StepRng;

    fn race() -> NoticeRace {
        NoticeRace { delivery_ms: Dist::Uniform(1.0, 2.0), resume_to_check_ms: Dist::Uniform(0.5, 1.5) }
    }

    #[test]
    fn no_race_draws_nothing_and_a_race_draws_the_application_first() {
        let mut rng = StepRng::new(0x9e37_79b9_7f4a_7c15, 0x2545_f491_4f6c_dd1d);
        let mut untouched = rng.clone();
        assert_eq!(race().check_after_resume(&mut rng, 10, false, false), None);
        assert_eq!(rng.gen::<u64>(), untouched.gen::<u64>(), "no draw without a race");

        let mut rng = StepRng::new(0x9e37_79b9_7f4a_7c15, 0x2545_f491_4f6c_dd1d);
        let mut same = rng.clone();
        let check = race().check_after_resume(&mut rng, 1_000, true, false).expect("a race");
        let app_ns = ms_to_ns(Dist::Uniform(0.5, 1.5).sample_non_negative(&mut same));
        assert_eq!(check, Check { app_ns, at_ns: 1_000 + app_ns });
        assert!((500_000..=1_500_000).contains(&check.app_ns));
        assert!(race().check_after_resume(&mut rng, 0, false, true).is_some());
    }

    #[test]
    fn a_check_sees_a_notice_that_arrived_by_then_and_no_later_one() {
        let check = Check { app_ns: 5, at_ns: 105 };
        assert!(check.sees(100) && check.sees(105));
        assert!(!check.sees(106));
    }
}
