//! The one depth-first walk the fingerprint tests share: every tie order of the events due at
//! one instant (each message 1 ms), to a bounded depth, with a visited set keyed by a
//! fingerprint, telling whether the client-symmetric fingerprint applied at every state met.

use std::collections::BTreeSet;

use locksim_simulator::scenario::types::RunSpec;
use locksim_simulator::search::SearchWorld;
use locksim_simulator::setup::Setup;

/// Every state a depth-first walk of every tie order meets within `depth` steps, keyed by `key`
/// into `seen`; false if symmetry did not apply at one of them.
pub fn walk(
    world: Box<dyn SearchWorld>,
    depth: u32,
    key: fn(&dyn SearchWorld) -> u64,
    seen: &mut BTreeSet<u64>,
) -> bool {
    let mut applied = world.symmetry_applies();
    if !seen.insert(key(world.as_ref())) || depth == 0 {
        return applied;
    }
    let mut world = world;
    for e in world.enabled() {
        let mut next = world.clone();
        next.step(e.seq, &[], 1_000_000);
        applied &= walk(next, depth - 1, key, seen);
    }
    applied
}

/// How many distinct states a walk of `run` to `depth` meets, keyed plain and client-symmetric.
pub struct Walked {
    pub plain: usize,
    pub symmetric: usize,
    /// The symmetric fingerprint applied at every state met.
    pub applied: bool,
}

/// Walks `run` (seed 1) to `depth` twice: states keyed by the plain fingerprint, then by the
/// client-symmetric one.
pub fn walk_both(run: &RunSpec, setup: &Setup, depth: u32) -> Walked {
    let start = || run.model.search_world(setup, &run.params, 1);
    let (mut plain, mut symmetric) = (BTreeSet::new(), BTreeSet::new());
    walk(start(), depth, |w| w.fingerprint(), &mut plain);
    let applied = walk(start(), depth, |w| w.fingerprint_symmetric(), &mut symmetric);
    Walked { plain: plain.len(), symmetric: symmetric.len(), applied }
}
