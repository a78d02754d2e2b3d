//! A scenario in which simulated time cannot advance: every latency, service, hold and think
//! time it can draw is 0, so a client acquires, releases and acquires again at one instant for
//! ever. Refused at parse time; a zero-time loop this check cannot see (a model that retries
//! without delay, a positive latency only on links nobody uses) is stopped by the engine instead
//! ([`crate::outcome::Halt::Stuck`]).

use crate::dist::Dist;
use crate::scenario::types::RunSpec;
use crate::scenario::walk::{Res, Source, Tab};
use crate::setup::{NetworkSpec, WorkloadSpec};

/// The model parameter holding a server's time to handle a request, where a model has one.
const SERVICE_PARAM: &str = "service_ms";

/// Whether a time drawn from `d` is 0 every time.
fn always_zero(d: &Dist) -> bool {
    d.max_value() <= 0.0
}

/// Refuses the scenario when no time it draws can be positive (see the module doc); the error
/// points at `workload.hold_ms`, which is written whenever this holds (its default is not 0).
pub(crate) fn check<'r>(
    src: &Source,
    root: &Tab,
    network: &NetworkSpec,
    workload: &WorkloadSpec,
    runs: impl IntoIterator<Item = &'r RunSpec>,
) -> Res<()> {
    let latency_zero =
        always_zero(&network.latency_ms) && network.links.iter().all(|l| l.latency_ms.as_ref().is_none_or(always_zero));
    if !(latency_zero && always_zero(&workload.hold_ms) && always_zero(&workload.think_ms)) {
        return Ok(());
    }
    let service_zero = runs
        .into_iter()
        .all(|r| !r.params.values.contains_key(SERVICE_PARAM) || always_zero(&r.params.dist(SERVICE_PARAM)));
    if !service_zero {
        return Ok(());
    }
    let message = "every latency, service, hold and think time in this scenario is 0, so simulated time \
                   would never advance (a zero-time loop: each client acquires and releases at one instant for \
                   ever); give one of them a positive value (network.latency_ms, models.MODEL.service_ms, \
                   workload.hold_ms or workload.think_ms)";
    let hold =
        root.get("workload").and_then(|w| w.as_table(src, "a table").ok()).and_then(|w| w.get("hold_ms").cloned());
    Err(match hold {
        Some(node) => node.err(src, message),
        None => src.error(&(0..0), "workload.hold_ms", message),
    })
}
