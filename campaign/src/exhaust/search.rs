//! The search itself: depth-first over a world's choices (which due event next, each message's
//! delay from the bounded set, a menu fault before an event of its target), with a visited set of
//! (world fingerprint, budgets left) and the depth left when each was explored, inside an
//! iterative-deepening loop whose depth limit doubles from `start_depth`. Within a round, a
//! violation found at depth d lowers the limit to d − 1, so the round ends with the shortest
//! violation within its limit; the rounds before it found none that short, so that is the
//! shortest of all (and one round at `max_depth` finds the same one).
//!
//! A state is explored again only when reached with more depth left than before (else what lies
//! below it within the limit was already searched). A violation is judged on each step that
//! recorded a history event, by the checkers on the path's history so far.
//!
//! A panic inside the model (or a checker) during the search ends it: it is caught around each
//! round, the worlds it left are dropped, and the search returns the panic's message with the
//! path to it (the step that panicked last: each step is on the path while it is taken).

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use locksim_simulator::batch::panic_message;
use locksim_simulator::checker::{check_keeping, SeedMetrics};
use locksim_simulator::directory::NodeKind;
use locksim_simulator::process::NodeId;
use locksim_simulator::search::{ChosenTimes, Enabled, Injection, SearchWorld};
use locksim_simulator::setup::FaultKind;
use locksim_simulator::time::Nanos;

use super::bounds::{Bounds, Property, Targets};
use super::times::TimeChoices;

/// One step of a path, enough to take it again from the same world.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// The event with this sequence number, its latencies in order (past them: the first delay).
    Event {
        /// The event.
        seq: u64,
        /// Its handlers' latencies.
        delays_ns: Vec<Nanos>,
        /// The hold and think times its driver started (past them: each set's first).
        times: ChosenTimes,
    },
    /// A menu fault started at `at_ns`, and its start handled at once.
    Fault {
        /// What, on whom, how long.
        injection: Injection,
        /// When (the instant of the events due next).
        at_ns: Nanos,
        /// The latencies its start needed (a killed process's connection resets).
        delays_ns: Vec<Nanos>,
        /// The hold and think times its start needed (none so far: faults start no hold or think).
        times: ChosenTimes,
    },
}

impl Step {
    /// The event `seq` with every latency the first delay and no chosen times.
    fn plain(seq: u64) -> Step {
        Step::Event { seq, delays_ns: Vec::new(), times: ChosenTimes::default() }
    }
}

/// Counts kept while searching, shown by the progress line and the certificate.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Steps taken (states reached, counting repeats).
    pub states: u64,
    /// Distinct (fingerprint, faults left) explored in the last round.
    pub unique: u64,
    /// The deepest path reached (steps).
    pub max_depth: u32,
    /// The depth limit of the round in progress.
    pub limit: u32,
    /// Rounds of iterative deepening run.
    pub rounds: u32,
}

/// Why a search did not cover every schedule within its bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incomplete {
    /// Some path was still going at the largest depth limit.
    DepthBound,
    /// The visited set reached its memory bound.
    VisitedFull,
    /// Ctrl-C (or another stop).
    Stopped,
}

/// A panic inside the model (or a checker) that ended the search.
#[derive(Clone, Debug, PartialEq)]
pub struct Panicked {
    /// The panic's message.
    pub message: String,
    /// The path from the root to it, its last step the one that panicked (none: the root's
    /// own moves panicked, e.g. listing what is due).
    pub path: Vec<Step>,
}

/// What a search ends with.
#[derive(Clone, Debug)]
pub struct Found {
    /// The shortest path to a violation, if one was found.
    pub counterexample: Option<Vec<Step>>,
    /// Counts.
    pub stats: Stats,
    /// `None`: every schedule within the bounds was covered (or a counterexample was found, or
    /// the model panicked).
    pub incomplete: Option<Incomplete>,
    /// The model panicked: the search stopped there, with no counterexample and no certificate.
    pub panicked: Option<Panicked>,
}

/// Whether `m`, the checkers' measure of a history, shows `property`.
pub fn shows(property: Property, m: &SeedMetrics) -> bool {
    match property {
        Property::Overlap => m.overlap_events > 0,
        Property::StaleWrite => m.stale_unfenced_events > 0,
        Property::FencedStaleWrite => m.stale_fenced_events.unwrap_or(0) > 0,
        Property::TokenRegression => m.token_regressions > 0,
    }
}

/// The checkers' measure of `world`'s history so far (`at_end`: as if the run ended at its full
/// length), the same code `sim run` judges a seed with. The engine hands the history over; the
/// judging stays in this layer.
pub fn judge(world: &dyn SearchWorld, at_end: bool) -> SeedMetrics {
    check_keeping(world.seed(), &world.history_so_far(at_end), 1)
}

/// What a path may still spend: faults, and messages given a delay other than the first; and,
/// under `distinct_faults`, which menu entries it has used (bit i: entry i).
#[derive(Clone, Copy, Debug)]
struct Budget {
    faults: u32,
    slow: u32,
    used: u64,
}

struct Round<'a> {
    bounds: &'a Bounds,
    stop: &'a AtomicBool,
    progress: &'a mut dyn FnMut(&Stats),
    stats: Stats,
    limit: u32,
    visited: BTreeMap<u64, u32>,
    path: Vec<Step>,
    best: Option<Vec<Step>>,
    cut: bool,
    halted: Option<Incomplete>,
    /// The hold and think times chosen at each acquisition (none: the workload's).
    times: TimeChoices,
}

/// The search thread's stack: the search recurses once per branch point along a path (a path
/// runs to the end of the run when nothing breaks, thousands of steps), deeper than a test
/// thread's 2 MiB allows. Reserved, not touched: the pages used are the ones the path needs.
const SEARCH_STACK_BYTES: usize = 1 << 30;

/// Searches every schedule of `root` within `bounds` (see the module docs). `progress` is called
/// every few thousand states; `stop` ends the search early (incomplete). Runs on a thread of its
/// own with a deep stack ([`SEARCH_STACK_BYTES`]); one thread, so the order is the same.
pub fn search(
    root: &dyn SearchWorld,
    bounds: &Bounds,
    stop: &AtomicBool,
    progress: &mut (dyn FnMut(&Stats) + Send),
) -> Found {
    let root = root.box_clone();
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("exhaust".into())
            .stack_size(SEARCH_STACK_BYTES)
            .spawn_scoped(scope, move || rounds(root.as_ref(), bounds, stop, progress))
            .expect("the search thread starts")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Iterative deepening: rounds of a doubling depth limit from `bounds.start_depth`, until one
/// completes, finds a violation, or reaches `max_depth`.
fn rounds(root: &dyn SearchWorld, bounds: &Bounds, stop: &AtomicBool, progress: &mut dyn FnMut(&Stats)) -> Found {
    let mut stats = Stats::default();
    let mut limit = bounds.start_depth.min(bounds.max_depth).max(1);
    loop {
        let mut round = Round {
            bounds,
            stop,
            progress: &mut *progress,
            stats: Stats { limit, rounds: stats.rounds + 1, ..stats.clone() },
            limit,
            visited: BTreeMap::new(),
            path: Vec::new(),
            best: None,
            cut: false,
            halted: None,
            times: TimeChoices::of(bounds),
        };
        let budget = Budget { faults: bounds.faults, slow: bounds.slow_messages, used: 0 };
        // The one panic boundary of the search: the unwinding drops every world of the round,
        // and the path is left as it was at the panic (its pops are skipped).
        let explored = catch_unwind(AssertUnwindSafe(|| round.explore(root.box_clone(), 0, budget)));
        round.stats.unique = round.visited.len() as u64;
        stats = round.stats.clone();
        let end =
            |counterexample, incomplete| Found { counterexample, stats: stats.clone(), incomplete, panicked: None };
        if let Err(payload) = explored {
            let panicked = Panicked { message: panic_message(payload.as_ref()), path: round.path };
            return Found { panicked: Some(panicked), ..end(None, None) };
        }
        if round.best.is_some() {
            return end(round.best, None);
        }
        if let Some(why) = round.halted {
            return end(None, Some(why));
        }
        if !round.cut {
            return end(None, None);
        }
        if limit >= bounds.max_depth {
            return end(None, Some(Incomplete::DepthBound));
        }
        limit = limit.saturating_mul(2).min(bounds.max_depth);
    }
}

impl Round<'_> {
    /// Explores everything below `world`, reached in `depth` steps with `left` to spend. A run of
    /// states with one way on each is walked in place, in a loop (no copy, no fingerprint, no
    /// recursion: a path through thousands of heartbeats does not grow the stack).
    fn explore(&mut self, world: Box<dyn SearchWorld>, depth: u32, left: Budget) {
        let walked_from = self.path.len();
        self.walk(world, depth, left);
        self.path.truncate(walked_from);
    }

    fn walk(&mut self, mut world: Box<dyn SearchWorld>, mut depth: u32, left: Budget) {
        loop {
            if self.halted.is_some() {
                return;
            }
            self.stats.states += 1;
            self.stats.max_depth = self.stats.max_depth.max(depth);
            if self.stats.states.is_multiple_of(2048) {
                if self.stop.load(Ordering::Relaxed) {
                    self.halted = Some(Incomplete::Stopped);
                    return;
                }
                self.stats.unique = self.visited.len() as u64;
                (self.progress)(&self.stats);
            }
            let enabled = world.enabled();
            if enabled.is_empty() {
                // The run's end: the checkers see the whole run, as `sim run` would.
                if shows(self.bounds.property, &judge(world.as_ref(), true)) {
                    self.record(depth);
                }
                return;
            }
            if world.clients_finished() {
                return;
            }
            if depth >= self.limit {
                self.cut = true;
                return;
            }
            let faults =
                if left.faults > 0 { self.fault_moves(world.as_ref(), &enabled, left.used) } else { Vec::new() };
            let one_delay = self.bounds.delays_ns.len() == 1 || left.slow == 0;
            let d0 = self.bounds.delays_ns[0];
            if enabled.len() == 1 && faults.is_empty() && one_delay && !self.time_choice(world.as_ref(), &enabled[0]) {
                // One way on: take it in place.
                let history = world.history_len();
                let seq = enabled[0].seq;
                self.path.push(Step::plain(seq)); // while taken (a panic leaves it on the path)
                let taken = world.step(seq, &[], d0);
                self.path.pop();
                self.path.push(Step::Event { seq, delays_ns: vec![d0; taken], times: ChosenTimes::default() });
                depth += 1;
                if world.history_len() > history && shows(self.bounds.property, &judge(world.as_ref(), false)) {
                    self.stats.states += 1;
                    self.stats.max_depth = self.stats.max_depth.max(depth);
                    self.record(depth);
                    return;
                }
                continue;
            }
            // A branch: looked up in the visited set (only branches are: a visited set over a
            // subset of the states prunes less, never wrongly, and saves the others' fingerprints).
            let fingerprint = if self.bounds.symmetry { world.fingerprint_symmetric() } else { world.fingerprint() };
            let key = fingerprint
                ^ u64::from(left.faults).wrapping_mul(0x9e37_79b9_7f4a_7c15)
                ^ u64::from(left.slow).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
                ^ left.used.wrapping_mul(0x1656_67b1_9e37_79f9);
            let depth_left = self.limit - depth;
            match self.visited.get(&key) {
                Some(&seen) if seen >= depth_left => return,
                Some(_) => {}
                None if self.visited.len() >= self.bounds.max_visited => {
                    self.halted = Some(Incomplete::VisitedFull);
                    return;
                }
                None => {}
            }
            self.visited.insert(key, depth_left);
            let limit = self.limit;
            self.branch(world, depth, left, &enabled, faults, one_delay);
            if self.limit < limit {
                // A violation below lowered the limit: the moves after it were searched only to
                // the new one, so this state is covered only that deep. Left at `depth_left`, a
                // shorter path reaching it later would be pruned, and a shorter violation missed.
                self.visited.insert(key, self.limit.saturating_sub(depth));
            }
            return;
        }
    }

    /// Every move from a branch: each enabled event (with each assignment of delays to its
    /// sends), then each menu fault; the world itself goes to its last child, the others get copies.
    fn branch(
        &mut self,
        world: Box<dyn SearchWorld>,
        depth: u32,
        left: Budget,
        enabled: &[Enabled],
        faults: Vec<(usize, Injection, Nanos)>,
        one_delay: bool,
    ) {
        let d0 = self.bounds.delays_ns[0];
        let moves = enabled.len() + faults.len();
        let history = world.history_len();
        let mut slot = Some(world);
        for (i, e) in enabled.iter().enumerate() {
            let last = i + 1 == moves;
            // Each step, probes too, is on the path while taken: a panic leaves it there.
            self.path.push(Step::plain(e.seq));
            let (timings, probe) = self.times.for_step(slot_ref(&slot), e, d0);
            self.path.pop();
            if one_delay && timings.len() == 1 {
                let (child, taken) = match probe {
                    // The probe took this step as this move does (no time is a choice in it);
                    // the last move leaves the world to nothing.
                    Some((probe, taken)) => {
                        if last {
                            slot = None;
                        }
                        (probe, taken.latencies)
                    }
                    None => {
                        let mut child = if last { slot.take().expect("the last child") } else { slot_clone(&slot) };
                        self.path.push(Step::plain(e.seq));
                        let taken = child.step(e.seq, &[], d0);
                        self.path.pop();
                        (child, taken)
                    }
                };
                let step = Step::Event { seq: e.seq, delays_ns: vec![d0; taken], times: ChosenTimes::default() };
                self.child(child, history, step, depth, left);
            } else {
                let (combinations, probe) = self.delay_combinations(slot_ref(&slot), e.seq, None, left.slow);
                // The probe took the first combination (every latency the first delay) with no
                // times given: it is that move's child when no time is a choice here.
                let mut probe = (timings.len() == 1 && timings[0] == ChosenTimes::default()).then_some(probe);
                for (delays_ns, slow) in combinations {
                    for times in &timings {
                        let left = Budget { slow: left.slow - slow, ..left };
                        let step = Step::Event { seq: e.seq, delays_ns: delays_ns.clone(), times: times.clone() };
                        let child = match probe.take() {
                            Some(child) => child,
                            None => {
                                let mut child = slot_clone(&slot);
                                self.path.push(step.clone());
                                child.step_timed(e.seq, &delays_ns, d0, times);
                                self.path.pop();
                                child
                            }
                        };
                        self.child(child, history, step, depth, left);
                    }
                }
            }
            if self.depth_exhausted(depth) {
                return;
            }
        }
        let fault_moves = faults.len();
        for (i, (entry, injection, at_ns)) in faults.into_iter().enumerate() {
            let used = if self.bounds.distinct_faults { left.used | 1 << entry } else { left.used };
            if one_delay {
                // Every latency the first delay: no probe to count them (the step says how many
                // it took), and the last move takes the world itself.
                let last = i + 1 == fault_moves;
                let mut child = if last { slot.take().expect("the last child") } else { slot_clone(&slot) };
                let taking = Step::Fault {
                    injection: injection.clone(),
                    at_ns,
                    delays_ns: Vec::new(),
                    times: ChosenTimes::default(),
                };
                self.path.push(taking); // while taken (a panic leaves it on the path)
                let seq = child.inject_fault(&injection, at_ns);
                child.enabled();
                let taken = child.step(seq, &[], d0);
                self.path.pop();
                let step = Step::Fault { injection, at_ns, delays_ns: vec![d0; taken], times: ChosenTimes::default() };
                self.child(child, history, step, depth, Budget { faults: left.faults - 1, used, ..left });
                if self.depth_exhausted(depth) {
                    return;
                }
                continue;
            }
            let (combinations, probe) =
                self.delay_combinations(slot_ref(&slot), 0, Some((&injection, at_ns)), left.slow);
            // The probe took the first combination (every latency the first delay).
            let mut probe = Some(probe);
            for (delays_ns, slow) in combinations {
                let step =
                    Step::Fault { injection: injection.clone(), at_ns, delays_ns, times: ChosenTimes::default() };
                let child = match probe.take() {
                    Some(child) => child,
                    None => {
                        let mut child = slot_clone(&slot);
                        self.path.push(step.clone());
                        let seq = child.inject_fault(&injection, at_ns);
                        child.enabled();
                        if let Step::Fault { delays_ns, .. } = &step {
                            child.step(seq, delays_ns, d0);
                        }
                        self.path.pop();
                        child
                    }
                };
                self.child(
                    child,
                    history,
                    step,
                    depth,
                    Budget { faults: left.faults - 1, slow: left.slow - slow, used },
                );
            }
            if self.depth_exhausted(depth) {
                return;
            }
        }
    }

    /// Whether taking `event` starts a hold or think whose time is a choice (then it is a branch,
    /// even as the only move).
    fn time_choice(&mut self, world: &dyn SearchWorld, event: &Enabled) -> bool {
        if !self.times.may_time(world, event) {
            return false;
        }
        self.path.push(Step::plain(event.seq)); // its probe, on the path while taken
        let choices = self.times.for_step(world, event, self.bounds.delays_ns[0]).0.len();
        self.path.pop();
        choices > 1
    }

    /// A shorter violation was found meanwhile: nothing at this depth can be shorter.
    fn depth_exhausted(&self, depth: u32) -> bool {
        self.halted.is_some() || depth >= self.limit
    }

    /// Every assignment of the bounded delays to the latencies the step needs (learned by taking
    /// it once on a copy with the first delay everywhere) that gives at most `slow_left` of them
    /// a delay other than the first, each with how many it gives one; the first is every latency
    /// the first delay, and the copy, which took that one, comes back with them.
    fn delay_combinations(
        &mut self,
        world: &dyn SearchWorld,
        seq: u64,
        fault: Option<(&Injection, Nanos)>,
        slow_left: u32,
    ) -> (Vec<DelayCombination>, Box<dyn SearchWorld>) {
        let d = &self.bounds.delays_ns;
        let mut probe = world.box_clone();
        // The probe's step, on the path while taken (a panic leaves it there).
        self.path.push(match fault {
            Some((inj, at_ns)) => {
                Step::Fault { injection: inj.clone(), at_ns, delays_ns: Vec::new(), times: ChosenTimes::default() }
            }
            None => Step::plain(seq),
        });
        let taken = match fault {
            Some((inj, at_ns)) => {
                let s = probe.inject_fault(inj, at_ns);
                probe.enabled();
                probe.step(s, &[], d[0])
            }
            None => probe.step(seq, &[], d[0]),
        };
        self.path.pop();
        if d.len() == 1 || taken == 0 || slow_left == 0 {
            return (vec![(vec![d[0]; taken], 0)], probe);
        }
        // An odometer over `taken` digits of base `d.len()`; the count is bounded by the caller's
        // choice of delays (|delays|^sends of one handler).
        let mut out = Vec::new();
        let mut digits = vec![0usize; taken];
        loop {
            let slow = digits.iter().filter(|&&i| i != 0).count() as u32;
            if slow <= slow_left {
                out.push((digits.iter().map(|&i| d[i]).collect(), slow));
            }
            let mut k = 0;
            loop {
                if k == taken {
                    return (out, probe);
                }
                digits[k] += 1;
                if digits[k] < d.len() {
                    break;
                }
                digits[k] = 0;
                k += 1;
            }
        }
    }

    /// The menu faults that may start now: each before an event of its target that is due now,
    /// with its entry's index in the menu; under `distinct_faults`, only entries not in `used`.
    fn fault_moves(&self, world: &dyn SearchWorld, enabled: &[Enabled], used: u64) -> Vec<(usize, Injection, Nanos)> {
        let at_ns = enabled[0].at_ns;
        let mut due: Vec<NodeId> = enabled.iter().filter_map(|e| e.node).collect();
        due.sort_unstable();
        due.dedup();
        let nodes = world.nodes();
        let leader = world.leader();
        let mut out = Vec::new();
        for (entry, item) in self.bounds.menu.iter().enumerate() {
            if self.bounds.distinct_faults && used & (1 << entry) != 0 {
                continue;
            }
            for &n in &due {
                let (name, kind) = &nodes[n];
                let hit = match &item.targets {
                    Targets::Clients => *kind == NodeKind::Client,
                    Targets::Waiters => *kind == NodeKind::Client && world.is_waiting(n),
                    Targets::Blocked => *kind == NodeKind::Client && world.is_blocked(n),
                    Targets::Holders => *kind == NodeKind::Client && world.is_holding(n),
                    Targets::Servers => matches!(kind, NodeKind::Server | NodeKind::Sentinel),
                    Targets::Leader => leader == Some(n),
                    Targets::Named(want) => want == name,
                };
                if !hit || !world.node_is_up(n) {
                    continue;
                }
                for (i, &duration_ns) in item.lengths_ns.iter().enumerate() {
                    let (kind, value) = match &item.kind {
                        FaultKind::ClockJump { .. } => {
                            let by = item.jumps_ms[i];
                            (FaultKind::ClockJump { by_ms: locksim_simulator::dist::Dist::Const(by) }, by)
                        }
                        k => (k.clone(), 0.0),
                    };
                    out.push((entry, Injection { kind, target: n, duration_ns, value }, at_ns));
                }
            }
        }
        out
    }

    fn child(&mut self, child: Box<dyn SearchWorld>, history: usize, step: Step, depth: u32, left: Budget) {
        self.path.push(step);
        let violated = child.history_len() > history && shows(self.bounds.property, &judge(child.as_ref(), false));
        if violated {
            self.stats.states += 1;
            self.stats.max_depth = self.stats.max_depth.max(depth + 1);
            self.record(depth + 1);
        } else {
            self.explore(child, depth + 1, left);
        }
        self.path.pop();
    }

    /// A violation at the end of the current path, `depth` steps long: keep it if shortest, and
    /// search on only for shorter ones.
    fn record(&mut self, depth: u32) {
        if self.best.as_ref().is_none_or(|b| (b.len() as u32) > depth) {
            self.best = Some(self.path.clone());
        }
        self.limit = self.limit.min(depth.saturating_sub(1));
    }
}

/// One assignment of delays to a step's latencies, with how many are not the first delay.
type DelayCombination = (Vec<Nanos>, u32);

/// The world still held for the moves after this one.
fn slot_ref(slot: &Option<Box<dyn SearchWorld>>) -> &dyn SearchWorld {
    slot.as_deref().expect("only the last move takes the world")
}

/// A copy of the world still held, for one move.
fn slot_clone(slot: &Option<Box<dyn SearchWorld>>) -> Box<dyn SearchWorld> {
    slot_ref(slot).box_clone()
}
