//! The `client` preset: which client-go version the electors run, and the defaults and behaviours
//! it has in its source (docs/libraries.md has the readings; the citations are repeated in
//! docs/models.md). A preset fills every library-dependent parameter the scenario leaves at its
//! schema default; an explicit value overrides it.
//!
//! The default is `client-go-0.30`, the newest release read (issue 32: the default preset is the
//! newest stable release); `locksim-1` stays selectable.
//!
//! - `locksim-1` (the default before issue 32's flip): the model as it was before presets, no parameter changed. It
//!   already has client-go 0.30's timings (the component-base recommended 15 s / 10 s / 2 s,
//!   `JitterFactor` 1.2, the 5 s HTTP timeout) and the leader's fast path, but it releases on
//!   cancel (`release_on_cancel = true`), which client-go does only when the program sets
//!   `ReleaseOnCancel` (docs/libraries.md, "Other differences" 7).
//! - `client-go-0.30` (v0.30.0 with component-base's recommended values; the default): `LeaseDuration` 15 s,
//!   `RenewDeadline` 10 s, `RetryPeriod` 2 s (`component-base config/v1alpha1/defaults.go:37-45`;
//!   client-go itself has no defaults); `JitterFactor = 1.2` and the checks `leaseDuration >
//!   renewDeadline > retryPeriod × 1.2` (`tools/leaderelection/leaderelection.go:72, 76-81`; the
//!   model's constant and validation); the acquire and renew loops (`:251, 271-274`) and the
//!   leader's fast path (`:330`), as the model runs them; expiry on the candidate's own clock
//!   (`:361, 417-418, 428`); HTTP timeout max(1 s, RenewDeadline / 2) = 5 s
//!   (`resourcelock/interface.go:194-200`); `ReleaseOnCancel` false, a plain `bool` field whose
//!   zero value is what a program that does not set it runs (`leaderelection.go:158`):
//!   `release_on_cancel = false`. A program that sets it writes `release_on_cancel = true`
//!   next to the preset (`release()`, `:290-313`).

use locksim_simulator::model::{ParamValue as V, Params};

/// The client-go version (`client`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// The model as it was before presets (`locksim-1`).
    Locksim,
    /// client-go v0.30.0 `tools/leaderelection` with component-base's recommended values.
    ClientGo030,
}

/// The `client` parameter's choices, in the order `sim list` shows them.
pub const LIBRARIES: &[&str] = &["locksim-1", "client-go-0.30"];

impl Library {
    /// The `client` parameter; anything not a preset is `locksim-1`.
    pub fn parse(s: &str) -> Library {
        match s {
            "client-go-0.30" => Library::ClientGo030,
            _ => Library::Locksim,
        }
    }

    /// The `client` parameter's text for this version (one of [`LIBRARIES`]).
    pub fn name(self) -> &'static str {
        match self {
            Library::Locksim => "locksim-1",
            Library::ClientGo030 => "client-go-0.30",
        }
    }
}

/// The parameters after the preset: every preset parameter the scenario did not set itself
/// ([`Params::fill_unset`]) takes the chosen version's value; one it set is kept. `locksim-1`
/// changes nothing.
pub fn resolve(params: &Params) -> Params {
    let lib = Library::parse(params.str("client"));
    let mut out = params.clone();
    if lib == Library::Locksim {
        return out;
    }
    out.fill_unset("lease_duration_ms", V::Num(15_000.0));
    out.fill_unset("renew_deadline_ms", V::Num(10_000.0));
    out.fill_unset("retry_period_ms", V::Num(2_000.0));
    // max(1 s, RenewDeadline / 2) of the RenewDeadline in force (the scenario's, if it set one).
    let renew_ms = out.f64("renew_deadline_ms");
    out.fill_unset("request_timeout_ms", V::Num((renew_ms / 2.0).max(1_000.0)));
    out.fill_unset("release_on_cancel", V::Bool(false));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_choice_parses_to_its_library() {
        let libs: Vec<Library> = LIBRARIES.iter().map(|s| Library::parse(s)).collect();
        assert_eq!(libs, [Library::Locksim, Library::ClientGo030]);
        let names: Vec<&str> = libs.iter().map(|l| l.name()).collect();
        assert_eq!(names, LIBRARIES, "name() gives back the parameter's text");
    }

    fn with(explicit: &[(&str, V)]) -> Params {
        let mut p = Params::default();
        p.values.insert("client".into(), V::Str("client-go-0.30".into()));
        p.values.insert("renew_deadline_ms".into(), V::Num(10_000.0));
        p.values.insert("release_on_cancel".into(), V::Bool(true));
        for (k, v) in explicit {
            p.set_explicit(k, v.clone());
        }
        p
    }

    #[test]
    fn the_preset_fills_defaults_and_an_explicit_value_wins() {
        let p = resolve(&with(&[]));
        assert!(!p.bool("release_on_cancel"));
        assert_eq!(p.f64("request_timeout_ms"), 5_000.0);
        let p = resolve(&with(&[("release_on_cancel", V::Bool(true)), ("renew_deadline_ms", V::Num(1_500.0))]));
        assert!(p.bool("release_on_cancel"), "the scenario's value is kept");
        assert_eq!(p.f64("request_timeout_ms"), 1_000.0, "max(1 s, RenewDeadline / 2)");
    }
}
