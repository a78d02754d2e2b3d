//! The engine's fault handling: a scheduled fault's start and end (crash, restart, pause,
//! clock drift and jumps, network rules), the selectors that pick its targets, and the
//! connection resets a crash sends. A part of [`World`]'s implementation kept apart from the
//! event loop and dispatch in `engine/mod.rs`; the world's fields and helpers are its module's.

use super::network::{Cut, Loss, Slow};
use super::queue::EventKind;
use super::{clock_segment, Applied, Backlogged, Status, World, ROLE_RETRY_NS};
use crate::directory::Directory;
use crate::history::{FaultWindow, HistoryEvent};
use crate::process::{ClientState, Crash, CrashKind, NodeId, NodeKind, Protocol};
use crate::setup::{FaultKind, Selector, SelectorView};
use crate::time::{ms_to_ns_signed, Nanos};
use crate::traced::{FaultPhase, Subject, TracedFault};

impl<P: Protocol> World<P> {
    pub(super) fn fault_start(&mut self, occ_idx: usize) {
        let occ = self.occurrences[occ_idx].clone();
        let spec = self.faults[occ.fault].clone();
        // Resolve who it hits; a role with no member yet waits.
        let mut targets = Vec::new();
        let mut groups: Vec<Vec<NodeId>> = Vec::new();
        if let FaultKind::Partition { groups: sel_groups, .. } = &spec.kind {
            for g in sel_groups {
                let mut members = Vec::new();
                for s in g {
                    // A group may name nodes that only some algorithms have (the
                    // scenario check ensures each group names at least one node of
                    // every run); a name this run lacks selects nobody rather than
                    // waiting forever for a node that will never exist.
                    if let Selector::Named(name) = s {
                        if self.dir.id_of(name).is_none() {
                            continue;
                        }
                    }
                    match self.resolve(s) {
                        Some(ids) => members.extend(ids),
                        None => return self.retry_fault(occ_idx, s),
                    }
                }
                members.dedup();
                groups.push(members);
            }
        } else {
            for s in &spec.targets {
                match self.resolve(s) {
                    Some(ids) => {
                        for id in ids {
                            if !targets.contains(&id) {
                                targets.push(id);
                            }
                        }
                    }
                    None => return self.retry_fault(occ_idx, s),
                }
            }
        }
        let names = |ids: &[NodeId], dir: &Directory| {
            ids.iter().map(|i| dir.name_of(*i).to_string()).collect::<Vec<_>>().join(", ")
        };
        let who = if groups.is_empty() {
            names(&targets, &self.dir)
        } else {
            groups.iter().map(|g| format!("[{}]", names(g, &self.dir))).collect::<Vec<_>>().join(" | ")
        };
        let detail = if groups.is_empty() {
            format!("{} starts on [{who}]{}", spec.kind.label(), duration_text(occ.duration_ns))
        } else {
            format!("{} starts: {who}{}", spec.kind.label(), duration_text(occ.duration_ns))
        };
        self.trace_about(
            None,
            "fault",
            |w| {
                let names = |ids: &[NodeId]| ids.iter().map(|i| w.dir.name_of(*i).to_string()).collect::<Vec<_>>();
                Subject::Fault(TracedFault {
                    kind: spec.kind.clone(),
                    phase: FaultPhase::Starts,
                    targets: if groups.is_empty() {
                        names(&targets)
                    } else {
                        groups.iter().flat_map(|g| names(g)).collect()
                    },
                    groups: groups.iter().map(|g| names(g)).collect(),
                })
            },
            |_| detail,
        );
        let instant = matches!(spec.kind, FaultKind::ClockJump { .. });
        self.window_of[occ_idx] = Some(self.fault_windows.len());
        self.fault_windows.push(FaultWindow {
            kind: spec.kind.label(),
            targets: who,
            start_ns: self.now_ns,
            end_ns: instant.then_some(self.now_ns),
        });
        let n = self.nodes.len();
        let mut applied = Applied { nodes: targets.clone(), saved_drift_ppm: Vec::new(), started: true };
        match &spec.kind {
            FaultKind::Crash { mode } => {
                for &t in &targets {
                    self.crash(t, *mode);
                }
            }
            FaultKind::Pause => {
                for &t in &targets {
                    let node = &mut self.nodes[t];
                    if node.status == Status::Crashed {
                        continue;
                    }
                    node.pauses += 1;
                    node.status = Status::Paused;
                }
            }
            FaultKind::Partition { one_way, .. } => {
                let mut group_of = vec![None; n];
                for (gi, g) in groups.iter().enumerate() {
                    for &m in g {
                        group_of[m] = Some(gi as u16);
                    }
                }
                self.network.add_rule(occ_idx, Cut { group_of, one_way: *one_way });
            }
            FaultKind::Isolate => {
                let mut group_of = vec![Some(1u16); n];
                for &t in &targets {
                    group_of[t] = Some(0);
                }
                self.network.add_rule(occ_idx, Cut { group_of, one_way: false });
            }
            FaultKind::ClockJump { .. } => {
                for &t in &targets {
                    self.nodes[t].clock.jump(ms_to_ns_signed(occ.value));
                    self.clock_segments.push(clock_segment(t, &self.nodes[t].clock, self.now_ns));
                }
            }
            FaultKind::ClockDrift { .. } => {
                for &t in &targets {
                    applied.saved_drift_ppm.push(self.nodes[t].clock.drift_ppm());
                    self.set_drift(t, occ.value);
                }
            }
            FaultKind::Slow { latency_ms } => {
                let mut nodes = vec![false; n];
                targets.iter().for_each(|&t| nodes[t] = true);
                self.network.add_rule(occ_idx, Slow { nodes, extra_ms: latency_ms.clone() });
            }
            FaultKind::Loss { rate } => {
                let mut nodes = vec![false; n];
                targets.iter().for_each(|&t| nodes[t] = true);
                self.network.add_rule(occ_idx, Loss { nodes, rate: *rate });
            }
        }
        self.applied[occ_idx] = applied;
        if let Some(d) = occ.duration_ns {
            // Saturating: a fault lasting past the end of time just never ends within the run.
            self.queue.push(self.now_ns.saturating_add(d), EventKind::FaultEnd { occurrence: occ_idx });
        }
    }

    fn retry_fault(&mut self, occ_idx: usize, waiting_for: &Selector) {
        if self.trace.is_some() && self.occurrences[occ_idx].start_ns == self.now_ns {
            let kind = self.faults[self.occurrences[occ_idx].fault].kind.clone();
            let detail = format!("{} waits for a `{}` to exist", kind.name(), waiting_for);
            let subject =
                Subject::Fault(TracedFault { kind, phase: FaultPhase::Waits, targets: vec![], groups: vec![] });
            self.trace_about(None, "fault", |_| subject, |_| detail);
        }
        self.queue.push(self.now_ns.saturating_add(ROLE_RETRY_NS), EventKind::FaultStart { occurrence: occ_idx });
    }

    pub(super) fn fault_end(&mut self, occ_idx: usize) {
        let applied = std::mem::take(&mut self.applied[occ_idx]);
        if !applied.started {
            return;
        }
        let kind = self.faults[self.occurrences[occ_idx].fault].kind.clone();
        if let Some(w) = self.window_of[occ_idx] {
            let window = &mut self.fault_windows[w];
            window.end_ns = Some(window.end_ns.unwrap_or(self.now_ns));
        }
        let detail = format!("{} ends", kind.label());
        self.trace_about(
            None,
            "fault",
            |_| {
                Subject::Fault(TracedFault {
                    kind: kind.clone(),
                    phase: FaultPhase::Ends,
                    targets: vec![],
                    groups: vec![],
                })
            },
            |_| detail,
        );
        match kind {
            FaultKind::Crash { .. } => {
                for &t in &applied.nodes {
                    self.restart(t);
                }
            }
            FaultKind::Pause => {
                for &t in &applied.nodes {
                    self.unpause(t);
                }
            }
            FaultKind::Partition { .. } | FaultKind::Isolate | FaultKind::Slow { .. } | FaultKind::Loss { .. } => {
                self.network.remove_rules(occ_idx);
            }
            FaultKind::ClockJump { .. } => {} // a step is not undone
            FaultKind::ClockDrift { .. } => {
                for (i, &t) in applied.nodes.iter().enumerate() {
                    self.set_drift(t, applied.saved_drift_ppm[i]);
                }
            }
        }
    }

    /// A connection between `a` and `b` is open (both ways).
    pub(super) fn connect(&mut self, a: NodeId, b: NodeId) {
        self.conns.set(a, b, true);
        self.conns.set(b, a, true);
    }

    /// `from`'s end of its connection with `to` closes (or refuses): `to` learns it one latency later.
    pub(super) fn send_reset(&mut self, from: NodeId, to: NodeId) {
        match self.network.route_reset(from, to, self.now_ns, &mut self.reset_rng) {
            Some(at_ns) => {
                self.trace_with(Some(from), "reset", |w| {
                    format!("→ {} connection reset (arrives {:.3} ms)", w.dir.name_of(to), at_ns as f64 / 1e6)
                });
                self.queue.push(at_ns, EventKind::Reset { from, to });
            }
            None => {
                self.trace_with(Some(from), "drop", |w| format!("→ {} connection reset (link cut)", w.dir.name_of(to)));
            }
        }
    }

    pub(super) fn deliver_reset(&mut self, from: NodeId, to: NodeId) {
        if self.network.is_cut(from, to) {
            self.trace_with(Some(to), "drop", |w| {
                format!("← {} connection reset (link cut in flight)", w.dir.name_of(from))
            });
            return;
        }
        self.conns.set(to, from, false);
        self.conns.set(from, to, false);
        match self.nodes[to].status {
            Status::Crashed => {}
            Status::Paused => self.nodes[to].backlog.push(Backlogged::Reset { peer: from }),
            Status::Up => {
                self.trace_with(Some(to), "reset", |w| format!("connection to {} reset", w.dir.name_of(from)));
                self.dispatch(to, |p, ctx| p.on_reset(ctx, from));
            }
        }
    }

    fn crash(&mut self, node: NodeId, kind: CrashKind) {
        if self.nodes[node].status == Status::Crashed {
            return;
        }
        self.nodes[node].status = Status::Crashed;
        self.nodes[node].crash_kind = kind;
        let peers: Vec<NodeId> = (0..self.nodes.len()).filter(|&p| p != node && self.conns.get(node, p)).collect();
        match kind {
            // The OS closes every socket of the killed process.
            CrashKind::Process => peers.iter().for_each(|&p| self.send_reset(node, p)),
            // Nobody is told; the peers' connections go stale until they next use them.
            CrashKind::Machine => peers.iter().for_each(|&p| self.stale.set(node, p, true)),
        }
        // Its own connections are gone, both ways, and so are those it had to stale peers.
        for p in 0..self.nodes.len() {
            self.conns.set(node, p, false);
            self.conns.set(p, node, false);
            self.stale.set(p, node, false);
        }
        self.nodes[node].pauses = 0;
        self.nodes[node].backlog.clear();
        let cleared = self.timers.clear_node(node);
        self.note_dead_timers(cleared);
        let clock = &self.nodes[node].clock;
        let crash = Crash { kind, mono_ns: clock.mono_ns(self.now_ns), wall_ns: clock.wall_ns(self.now_ns) };
        self.nodes[node].behaviour.on_crash(&crash);
        if self.dir.kind_of(node) == NodeKind::Client {
            self.record(node, HistoryEvent::ClientCrashed);
        }
    }

    fn restart(&mut self, node: NodeId) {
        if self.nodes[node].status != Status::Crashed {
            return;
        }
        self.nodes[node].status = Status::Up;
        self.trace_at(Some(node), "restart", String::new);
        self.dispatch(node, |p, ctx| p.on_restart(ctx));
    }

    fn unpause(&mut self, node: NodeId) {
        let n = &mut self.nodes[node];
        if n.status != Status::Paused {
            return;
        }
        n.pauses = n.pauses.saturating_sub(1);
        if n.pauses > 0 {
            return;
        }
        n.status = Status::Up;
        let backlog = std::mem::take(&mut n.backlog);
        let count = backlog.len();
        self.trace_at(Some(node), "resume", || format!("{count} queued events"));
        for item in backlog {
            // A handler earlier in the backlog may have crashed the node's plans (or a fault may
            // have crashed the node): stop if it is no longer up.
            if self.nodes[node].status != Status::Up {
                break;
            }
            match item {
                Backlogged::Start => {
                    self.trace_at(Some(node), "start", || "after pause".to_string());
                    self.dispatch(node, |p, ctx| p.on_start(ctx));
                }
                Backlogged::Message { from, msg } => {
                    self.trace_about(
                        Some(node),
                        "deliver",
                        |w| Subject::message_of(w.dir.name_of(from), &msg),
                        |w| format!("← {} {:?} (after pause)", w.dir.name_of(from), msg),
                    );
                    self.dispatch(node, |p, ctx| p.on_message(ctx, from, msg));
                }
                Backlogged::Reset { peer } => {
                    self.trace_with(Some(node), "reset", |w| {
                        format!("connection to {} reset (after pause)", w.dir.name_of(peer))
                    });
                    self.dispatch(node, |p, ctx| p.on_reset(ctx, peer));
                }
                Backlogged::Timer { id } => {
                    if let Some((_, tag)) = self.timers.take(id) {
                        self.trace_about(
                            Some(node),
                            "timer",
                            |_| Subject::timer_of(&tag),
                            |_| format!("{tag:?} (after pause)"),
                        );
                        self.dispatch(node, |p, ctx| p.on_timer(ctx, id, tag));
                    }
                }
            }
        }
    }

    fn set_drift(&mut self, node: NodeId, ppm: f64) {
        self.nodes[node].clock.set_drift(self.now_ns, ppm);
        self.clock_segments.push(clock_segment(node, &self.nodes[node].clock, self.now_ns));
        // Timers run on the node's clock: a new rate moves their true due times.
        for (id, deadline) in self.timers.live_of(node) {
            let due = self.nodes[node].clock.true_time_of_mono(deadline, self.now_ns);
            self.timers.set_due(id, due);
            self.queue.push(due, EventKind::Timer { id });
        }
    }

    /// The nodes a selector means now; None when a role has no member yet. The draw comes from
    /// the world's fault stream (a copy drawn from, then put back: the view borrows the world).
    fn resolve(&mut self, sel: &Selector) -> Option<Vec<NodeId>> {
        let mut rng = self.fault_rng.clone();
        let ids = sel.resolve(&FaultView(self), &mut rng);
        self.fault_rng = rng;
        ids
    }

    pub(super) fn leader(&self) -> Option<NodeId> {
        let mut best: Option<(u64, NodeId)> = None;
        for s in self.dir.of_kind(NodeKind::Server) {
            if self.nodes[s].status == Status::Crashed {
                continue;
            }
            if let Some(term) = self.nodes[s].behaviour.leadership() {
                if best.is_none_or(|(t, _)| term > t) {
                    best = Some((term, s));
                }
            }
        }
        match best {
            Some((_, s)) => Some(s),
            None if self.leaderless => self.dir.id_of("server-0"),
            None => None,
        }
    }
}

/// The world as a selector sees it: a role (`follower`, `holder`, `waiter`) is never a crashed
/// node, a random pick may be; the leader is [`World::leader`].
struct FaultView<'a, P: Protocol>(&'a World<P>);

impl<P: Protocol> SelectorView for FaultView<'_, P> {
    fn node_count(&self) -> usize {
        self.0.dir.len()
    }
    fn name(&self, node: NodeId) -> &str {
        self.0.dir.name_of(node)
    }
    fn kind(&self, node: NodeId) -> NodeKind {
        self.0.dir.kind_of(node)
    }
    fn leader(&self) -> Option<NodeId> {
        self.0.leader()
    }
    fn alive(&self, node: NodeId) -> bool {
        self.0.nodes[node].status != Status::Crashed
    }
    fn client_state(&self, node: NodeId) -> Option<ClientState> {
        Some(self.0.nodes[node].behaviour.client_state())
    }
}

fn duration_text(d: Option<Nanos>) -> String {
    match d {
        Some(ns) => format!(" for {:.3} ms", ns as f64 / 1e6),
        None => " until the end".to_string(),
    }
}
