//! The seeds a report draws or tells, as its caller recorded them for it. This crate runs no seed
//! and calls no checker: a report says which seeds it needs ([`Wanted`], a pure function of the
//! results: `report::wanted`), and the caller (the campaign) records and checks exactly those and
//! hands each over finished ([`Recording`]: the history, the trace when asked, the checked
//! metrics with their violations, or the message of the seed's panic).

use locksim_simulator::outcome::SeedOutcome;

/// Violations an untraced recording keeps with their text: the first ones in true time (as
/// `sim explain --index` numbers them), which the page's interactive timeline marks and links.
/// A traced recording keeps every one (its trace shows them all).
pub const VIOLATIONS_KEPT: usize = 200;

/// One seed of one row a report needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wanted {
    /// The row.
    pub label: String,
    /// The seed.
    pub seed: u64,
    /// With its trace (an explanation reads the messages from it) and every violation kept;
    /// without, the first [`VIOLATIONS_KEPT`] violations keep their text.
    pub trace: bool,
}

/// A [`Wanted`] seed recorded and checked by the caller.
pub struct Recording {
    /// The row.
    pub label: String,
    /// The seed.
    pub seed: u64,
    /// The recording checked (its trace, and every violation, when [`Wanted::trace`] asked for
    /// them), or the message of its panic (or of a zero-time loop).
    pub outcome: Result<SeedOutcome, String>,
}
