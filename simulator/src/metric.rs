//! The registry of the metrics a user can name: in `[expect]`, in the results JSON's
//! expectations, in the table's columns. One enum, so a new metric is added in one place and
//! every `match` on it (the parser's list of keys, the expectation's accessor in
//! `locksim-reports`) fails to compile until it is handled.

use serde::Serialize;

/// How a metric is judged by `[expect]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// Counted in runs that showed it: `none`, `some`, `all`, or a comparison of the fraction.
    Runs,
    /// A value (a total, a rate, a percentile): `none` (0), `some` (> 0) or a comparison.
    Value,
}

macro_rules! metrics {
    ($( $variant:ident = $name:literal, $kind:ident, $meaning:literal; )*) => {
        /// A metric a user can name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Metric { $( #[doc = $meaning] $variant, )* }

        impl Metric {
            /// Every metric, in the order the docs list them.
            pub const ALL: &'static [Metric] = &[ $( Metric::$variant, )* ];
            /// Every metric's name, in the same order (the `[expect]` keys).
            pub const NAMES: &'static [&'static str] = &[ $( $name, )* ];

            /// Its name in `[expect]` and the results JSON.
            pub fn name(self) -> &'static str {
                match self { $( Metric::$variant => $name, )* }
            }
            /// Whether it counts runs or is a value.
            pub fn kind(self) -> MetricKind {
                match self { $( Metric::$variant => MetricKind::$kind, )* }
            }
            /// One line saying what it measures.
            pub fn meaning(self) -> &'static str {
                match self { $( Metric::$variant => $meaning, )* }
            }
        }
    };
}

metrics! {
    Overlap = "overlap", Runs, "two clients held one key in conflicting modes at the same true time";
    StaleUnfenced = "stale_unfenced", Runs, "a write from a client that no longer held the lock, accepted by the unfenced resource";
    StaleFenced = "stale_fenced", Runs, "a stale write the fenced resource still accepted (its token was not below the highest seen)";
    LostUpdates = "lost_updates", Runs, "the counter ended below the number of completed critical sections";
    TokenRegressions = "token_regressions", Runs, "a grant whose fencing token was below one granted before it on the key, or equal to the highest and not a leaked re-grant";
    LeakedRegrants = "leaked_regrants", Runs, "a client granted again the token it was granted last, nobody else having held the key since: a leaked lock, not a fencing failure";
    DoubleExecutions = "double_executions", Runs, "a scheduled job ran more than once in one period of true time (kind = \"scheduled\" workloads; 0 for the loop)";
    Acquisitions = "acquisitions", Value, "successful acquisitions, summed over runs";
    FailedAcquisitions = "failed_acquisitions", Value, "acquire calls that gave up, summed over runs";
    FailedReleases = "failed_releases", Value, "release calls that returned an error (the lock may still be held), summed over runs";
    ThroughputPerS = "throughput_per_s", Value, "completed critical sections per simulated second";
    AcquireLatencyMsP50 = "acquire_latency_ms_p50", Value, "median time of a successful acquire call";
    AcquireLatencyMsP99 = "acquire_latency_ms_p99", Value, "99th percentile time of a successful acquire call";
    AcquireLatencyMsMax = "acquire_latency_ms_max", Value, "longest successful acquire call";
    WaitMsP50 = "wait_ms_p50", Value, "median time from a section's first acquire call to its grant, failed calls included";
    WaitMsP99 = "wait_ms_p99", Value, "99th percentile time from a section's first acquire call to its grant";
    WaitMsMax = "wait_ms_max", Value, "longest time from a section's first acquire call to its grant (or to the end of the run)";
    HandoffMsP50 = "handoff_ms_p50", Value, "median time from a release to the next grant while someone waited";
    HandoffMsP99 = "handoff_ms_p99", Value, "99th percentile hand-off time";
    UnavailableMs = "unavailable_ms", Value, "mean per run of the time some client waited (from a section's first call to its grant) while no client held the key";
    OutageMs = "outage_ms", Value, "mean per run of the longest continuous stretch some client waited while no client held the key";
    OutageMsMax = "outage_ms_max", Value, "the longest such stretch in any run";
    Fairness = "fairness", Value, "mean per run of Jain's index of completed sections per client (1: equal shares, 1/n: one client)";
    MessagesPerAcquisition = "messages_per_acquisition", Value, "messages sent per successful acquisition";
    NotificationsPerRelease = "notifications_per_release", Value, "wake-ups delivered to waiters per release (the herd effect)";
    RefusedAttemptsPerS = "refused_attempts_per_s", Value, "refused lock requests per simulated second (polling load)";
}

impl Metric {
    /// The metric with this name.
    pub fn parse(name: &str) -> Option<Metric> {
        Metric::ALL.iter().copied().find(|m| m.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        assert_eq!(Metric::ALL.len(), Metric::NAMES.len());
        for (m, n) in Metric::ALL.iter().zip(Metric::NAMES) {
            assert_eq!(m.name(), *n);
            assert_eq!(Metric::parse(n), Some(*m));
        }
        let mut names = Metric::NAMES.to_vec();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Metric::NAMES.len());
    }
}
