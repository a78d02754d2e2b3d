//! The client library: client-go's `tools/leaderelection` `LeaderElector` with a
//! `resourcelock.LeaseLock`, one elector per Lease the application asks for.
//!
//! Source: `staging/src/k8s.io/client-go/tools/leaderelection/leaderelection.go` in
//! kubernetes/kubernetes at commit 0138c82 (the 1.31 line: it has the alpha
//! `CoordinatedLeaderElection` field and the leader's optimistic fast path), `resourcelock/
//! leaselock.go`, and `k8s.io/apimachinery/pkg/util/wait` (`backoff.go`, `poll.go`).
//!
//! The application's `lock()` is `RunOrDie`: a new `LeaderElector` (its observed record and
//! time start empty) whose `Run` calls `acquire`, then `OnStartedLeading` (the grant), then
//! `renew`. `unlock()` cancels `Run`'s context.
//!
//! `tryAcquireOrRenew(ctx)` (one attempt; `now` is read once, at its start):
//! 1. fast path: if `IsLeader()` (the observed record's holder is this identity) and
//!    `isLeaseValid(now)`, UPDATE the cached Lease (`ll.lease`, the object of the last successful
//!    call, so its `resourceVersion` is the precondition) with `renewTime = now`; success is
//!    done, an error falls through to the slow path;
//! 2. GET the Lease. 404: CREATE it (holder = me, `leaseTransitions` 0) and return whether that
//!    worked. Another error or a timeout: fail;
//! 3. if the record's raw JSON differs from the last one read (`observedRawRecord`), it becomes
//!    the observed record and `observedTime = now` on this candidate's clock. The JSON carries
//!    `acquireTime`/`renewTime` as `metav1.Time`, whose `MarshalJSON` writes RFC 3339 with whole
//!    seconds, so only a change of holder, duration, transitions or a renewal in another second
//!    counts as a change;
//! 4. if the holder is someone else and `isLeaseValid(now)`
//!    (`observedTime + leaseDurationSeconds > now`, the duration being the record's): fail;
//! 5. UPDATE the Lease read in 2 (its `resourceVersion`; 409 Conflict if someone wrote since)
//!    with holder = me, `renewTime = now`, and `leaseTransitions` as read (when the holder is me,
//!    keeping `acquireTime`) or +1 (taking it over).
//!
//! Every success makes what was written the observed record at `observedTime = now` (response).
//!
//! `acquire`: `wait.JitterUntil(f, RetryPeriod, JitterFactor = 1.2, sliding = true)`: an
//! attempt at once, then each next one `Jitter(RetryPeriod, 1.2)` = RetryPeriod × (1 + 1.2·u),
//! u uniform in [0, 1), after the previous attempt returned, until one succeeds. Its context has
//! no deadline: a request is bounded by the client's HTTP timeout only.
//!
//! `renew`: `wait.Until(f, RetryPeriod)` (sliding, no jitter): f at once, then RetryPeriod after
//! each f returns. f is `wait.PollImmediateUntil(RetryPeriod, tryAcquireOrRenew,
//! timeoutCtx.Done())` under `context.WithTimeout(ctx, RenewDeadline)`: an attempt at once; after
//! a failure the next at the next tick of a RetryPeriod ticker started when the first attempt
//! returned (a tick that comes while an attempt runs is dropped); when the deadline passes the
//! request in flight is cancelled and the poll fails. A failed poll ends leadership: `renew`
//! returns, calling `release()` first when `ReleaseOnCancel`, and only then does `Run`'s
//! deferred `OnStoppedLeading` tell the application (`LockEvent::Lost { honour: true }`:
//! kube-controller-manager's callback exits the process).
//!
//! `release()` (when `ReleaseOnCancel` and `IsLeader()`): UPDATE the cached Lease with an empty
//! holder, `leaseDurationSeconds: 1` and `leaseTransitions` as observed, under
//! `context.TODO()` (so the HTTP timeout only). A 409 (the Lease changed since the cached read,
//! e.g. a renewal the cancelled context abandoned was applied anyway: kubernetes/kubernetes
//! #131867) or a timeout leaves the Lease held until it expires. The application's `unlock()`
//! returns when `release()` does.
//!
//! Requests: each goes to the client's API server (`client-i` starts with `server-(i mod n)`)
//! with the leader-election client's HTTP timeout (`rest.Config.Timeout`;
//! `resourcelock.NewFromKubeconfig`, which kube-controller-manager uses, sets it to
//! max(1 s, RenewDeadline / 2)). A request that times out moves the client to the next API
//! server, as a load balancer or a re-dial would.
//!
//! The token of a grant is the `leaseTransitions` it wrote.

use std::collections::BTreeMap;

use locksim_simulator::durable::Durable;
use locksim_simulator::history::{LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::process::{Crash, Ctx, NodeId, TimerId};
use locksim_simulator::time::{Nanos, NS_PER_SEC};
use rand::Rng;

use super::protocol::{
    ApiError, ApiRequest, ApiResponse, ClientTimer, Identity, KubernetesMsg, KubernetesTimer, Lease, LeaseSpec, Verb,
};
use super::Kubernetes;

mod fingerprint;

/// client-go `leaderelection.JitterFactor`: the acquire loop waits RetryPeriod × (1 + 1.2·u).
pub const JITTER_FACTOR: f64 = 1.2;

/// `wait.Jitter(period, JitterFactor)`: `period + rand.Float64() × 1.2 × period`, the acquire
/// loop's wait after an attempt (`apimachinery/pkg/util/wait`, `jitteredBackoffManagerImpl`).
fn jitter(ctx: &mut Ctx<Kubernetes>, period: Nanos) -> Nanos {
    period + (ctx.rng().gen::<f64>() * JITTER_FACTOR * period as f64) as Nanos
}

/// The library's settings.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The number of API servers (`servers`).
    pub servers: usize,
    /// `int(LeaseDuration / time.Second)`: what acquiring and renewing write into the Lease.
    pub lease_duration_secs: u32,
    /// `RenewDeadline`: how long the renew poll may keep failing before leadership ends
    /// (`renew_deadline_ms`).
    pub renew_deadline_ns: Nanos,
    /// `RetryPeriod`: the base wait between attempts (`retry_period_ms`).
    pub retry_period_ns: Nanos,
    /// The leader-election client's HTTP timeout.
    pub request_timeout_ns: Nanos,
    /// `ReleaseOnCancel`: on `unlock()` and on lost leadership the leader UPDATEs the Lease to an
    /// empty holder (`release_on_cancel`).
    pub release_on_cancel: bool,
}

/// The part of a record that `json.Marshal(LeaderElectionRecord)` keeps: times in whole seconds
/// (`metav1.Time.MarshalJSON` writes RFC 3339 without fractions). Two reads with the same raw
/// record are "no change" for `observedTime`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RawRecord {
    holder: Option<Identity>,
    lease_duration_secs: u32,
    acquire_s: i64,
    renew_s: i64,
    transitions: u64,
}

impl RawRecord {
    fn of(spec: &LeaseSpec) -> Self {
        RawRecord {
            holder: spec.holder,
            lease_duration_secs: spec.lease_duration_secs,
            acquire_s: spec.acquire_time_us.div_euclid(1_000_000),
            renew_s: spec.renew_time_us.div_euclid(1_000_000),
            transitions: spec.transitions,
        }
    }
}

/// Which call the request in flight is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    /// tryAcquireOrRenew step 1: the leader's optimistic UPDATE.
    FastUpdate,
    /// Step 2's GET.
    Get,
    /// Step 2's CREATE after a 404.
    Create,
    /// Step 5's UPDATE.
    Update,
    /// `release()`'s UPDATE.
    Release,
}

/// The request in flight.
#[derive(Clone, Copy, Debug)]
struct Pending {
    id: u64,
    call: Call,
    timer: TimerId,
}

/// One `tryAcquireOrRenew` in progress.
#[derive(Clone, Copy, Debug)]
struct Attempt {
    /// Its `now` (monotonic), read at its start.
    now_mono: Nanos,
    /// The record it will write (holder = me, `renewTime` = its `now`).
    desired: LeaseSpec,
}

/// How an attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// It returned true.
    Won,
    /// The Lease is someone else's and not expired as this candidate sees it.
    Held,
    /// 409 Conflict or AlreadyExists: another candidate wrote first.
    Conflict,
    /// An error or a timeout.
    Failed,
}

/// What to tell the application once `release()` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Then {
    /// The application's `unlock()` returns.
    Released,
    /// `OnStoppedLeading` after the renew deadline passed.
    Lost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// `acquire`: trying until an attempt succeeds.
    Acquiring,
    /// `renew`: leading.
    Leading,
    /// `release()` in flight.
    Releasing { then: Then },
}

/// The renew poll in progress (`PollImmediateUntil` under the RenewDeadline context).
#[derive(Clone, Copy, Debug)]
struct Poll {
    deadline: TimerId,
    /// When the poll's RetryPeriod ticker started (when its first attempt returned).
    ticker_origin: Option<Nanos>,
}

/// One `LeaderElector` for the Lease of lock key `key`.
#[derive(Clone, Debug)]
struct Elector {
    key: LockKey,
    stage: Stage,
    /// `observedRecord` and `observedTime` (this node's monotonic clock).
    observed: LeaseSpec,
    observed_time: Nanos,
    /// `observedRawRecord`: the raw record of the last GET that saw a change.
    observed_raw: Option<RawRecord>,
    /// `ll.lease`: the object of the last successful GET, CREATE or UPDATE.
    cached: Option<Lease>,
    attempt: Option<Attempt>,
    pending: Option<Pending>,
    /// The acquire loop's or renew loop's next attempt.
    retry: Option<TimerId>,
    poll: Option<Poll>,
}

/// The client's connection: its API servers, which one it talks to, and its request ids.
#[derive(Clone, Debug, Default)]
struct Conn {
    servers: Vec<NodeId>,
    endpoint: usize,
    next_id: u64,
}

impl Conn {
    fn send(&mut self, ctx: &mut Ctx<Kubernetes>, lease: LockKey, verb: Verb) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        ctx.send(self.servers[self.endpoint], ApiRequest { id, lease, verb });
        id
    }

    /// The request timed out: try the next API server from now on.
    fn move_on(&mut self) {
        self.endpoint = (self.endpoint + 1) % self.servers.len();
    }
}

impl Elector {
    fn new(key: LockKey) -> Self {
        Elector {
            key,
            stage: Stage::Acquiring,
            observed: LeaseSpec::default(),
            observed_time: 0,
            observed_raw: None,
            cached: None,
            attempt: None,
            pending: None,
            retry: None,
            poll: None,
        }
    }

    /// `IsLeader()`: the observed record's holder is this identity.
    fn is_leader(&self, me: Identity) -> bool {
        self.observed.holder == Some(me)
    }

    /// `isLeaseValid(now)`: `observedTime + observedRecord.LeaseDurationSeconds` is after `now`.
    fn lease_valid(&self, now: Nanos) -> bool {
        self.observed_time + u64::from(self.observed.lease_duration_secs) * NS_PER_SEC > now
    }

    /// `setObservedRecord`: the record and `observedTime = clock.Now()`.
    fn set_observed(&mut self, spec: LeaseSpec, now: Nanos) {
        self.observed = spec;
        self.observed_time = now;
    }

    fn request(&mut self, ctx: &mut Ctx<Kubernetes>, cfg: &ClientConfig, conn: &mut Conn, call: Call, verb: Verb) {
        let id = conn.send(ctx, self.key, verb);
        let timer = ctx.set_timer(cfg.request_timeout_ns, ClientTimer::RequestTimeout { key: self.key });
        self.pending = Some(Pending { id, call, timer });
    }

    /// Drops the request in flight (its context was cancelled: an answer is ignored).
    fn abandon_request(&mut self, ctx: &mut Ctx<Kubernetes>) {
        if let Some(p) = self.pending.take() {
            ctx.cancel_timer(p.timer);
        }
        self.attempt = None;
    }

    fn cancel_timers(&mut self, ctx: &mut Ctx<Kubernetes>) {
        self.abandon_request(ctx);
        if let Some(t) = self.retry.take() {
            ctx.cancel_timer(t);
        }
        if let Some(p) = self.poll.take() {
            ctx.cancel_timer(p.deadline);
        }
    }

    /// `tryAcquireOrRenew` begins.
    fn try_start(&mut self, ctx: &mut Ctx<Kubernetes>, cfg: &ClientConfig, me: Identity, conn: &mut Conn) {
        let now_mono = ctx.now_mono_ns();
        let now_us = ctx.now_wall_ns().div_euclid(1_000);
        let mut desired = LeaseSpec {
            holder: Some(me),
            lease_duration_secs: cfg.lease_duration_secs,
            acquire_time_us: now_us,
            renew_time_us: now_us,
            transitions: 0,
        };
        // 1. The leader's fast path, assuming the cached object is still the current version.
        if let Some(cached) = self.cached.filter(|_| self.is_leader(me) && self.lease_valid(now_mono)) {
            desired.acquire_time_us = self.observed.acquire_time_us;
            desired.transitions = self.observed.transitions;
            self.attempt = Some(Attempt { now_mono, desired });
            let verb = Verb::Update { spec: desired, resource_version: cached.resource_version };
            return self.request(ctx, cfg, conn, Call::FastUpdate, verb);
        }
        self.attempt = Some(Attempt { now_mono, desired });
        self.request(ctx, cfg, conn, Call::Get, Verb::Get);
    }

    /// The answer to the attempt's request, or `None` when it timed out. Returns the attempt's
    /// outcome once `tryAcquireOrRenew` has returned.
    fn advance(
        &mut self,
        ctx: &mut Ctx<Kubernetes>,
        cfg: &ClientConfig,
        me: Identity,
        conn: &mut Conn,
        call: Call,
        result: Option<Result<Lease, ApiError>>,
    ) -> Option<Outcome> {
        let attempt = self.attempt?;
        let now = ctx.now_mono_ns();
        let key = self.key;
        match (call, result) {
            (Call::FastUpdate | Call::Create | Call::Update, Some(Ok(lease))) => {
                self.cached = Some(lease);
                self.set_observed(attempt.desired, now);
                Some(Outcome::Won)
            }
            (Call::FastUpdate, _) => {
                // "Failed to update lock optimistically, falling back to slow path".
                self.request(ctx, cfg, conn, Call::Get, Verb::Get);
                None
            }
            (Call::Get, Some(Ok(lease))) => {
                self.cached = Some(lease);
                let raw = RawRecord::of(&lease.spec);
                if self.observed_raw != Some(raw) {
                    self.set_observed(lease.spec, now);
                    self.observed_raw = Some(raw);
                    ctx.note(|| {
                        format!("lease {key}: observed a change: {:?} rv={}", lease.spec, lease.resource_version)
                    });
                }
                let old = lease.spec;
                if old.holder.is_some() && self.lease_valid(attempt.now_mono) && !self.is_leader(me) {
                    return Some(Outcome::Held);
                }
                let mut desired = attempt.desired;
                if self.is_leader(me) {
                    desired.acquire_time_us = old.acquire_time_us;
                    desired.transitions = old.transitions;
                } else {
                    desired.transitions = old.transitions + 1;
                }
                self.attempt = Some(Attempt { desired, ..attempt });
                let verb = Verb::Update { spec: desired, resource_version: lease.resource_version };
                self.request(ctx, cfg, conn, Call::Update, verb);
                None
            }
            (Call::Get, Some(Err(ApiError::NotFound))) => {
                self.request(ctx, cfg, conn, Call::Create, Verb::Create { spec: attempt.desired });
                None
            }
            (Call::Create | Call::Update, Some(Err(ApiError::AlreadyExists | ApiError::Conflict))) => {
                if call == Call::Create {
                    // `ll.lease` is whatever the failed Create returned: no usable object.
                    self.cached = None;
                }
                Some(Outcome::Conflict)
            }
            (Call::Get | Call::Create | Call::Update, _) => Some(Outcome::Failed),
            (Call::Release, _) => None,
        }
    }
}

/// What a client forgets in a crash: everything (a client library keeps nothing durable).
#[derive(Clone, Debug, Default)]
struct Volatile {
    conn: Conn,
    /// This incarnation's identity (drawn at start).
    me: Option<Identity>,
    electors: BTreeMap<LockKey, Elector>,
}

/// client-go's leader election over Lease objects, one elector per lock key.
#[derive(Clone, Debug)]
pub struct KubernetesClient {
    cfg: ClientConfig,
    index: u32,
    v: Volatile,
}

impl KubernetesClient {
    /// Client `index`; it starts on API server `index` mod `servers` and draws a new identity at
    /// every start.
    pub fn new(index: usize, cfg: ClientConfig) -> Self {
        KubernetesClient::from_disk((cfg, index as u32))
    }

    fn me(&self) -> Identity {
        self.v.me.expect("identity drawn at start")
    }

    fn start_attempt(&mut self, ctx: &mut Ctx<Kubernetes>, key: LockKey) {
        let me = self.me();
        let Volatile { conn, electors, .. } = &mut self.v;
        if let Some(e) = electors.get_mut(&key) {
            e.try_start(ctx, &self.cfg, me, conn);
        }
    }

    /// `renew`'s `wait.Until` runs its function: a new poll with its RenewDeadline.
    fn start_poll(&mut self, ctx: &mut Ctx<Kubernetes>, key: LockKey) {
        let Some(e) = self.v.electors.get_mut(&key) else { return };
        let deadline = ctx.set_timer(self.cfg.renew_deadline_ns, ClientTimer::RenewDeadline { key });
        e.poll = Some(Poll { deadline, ticker_origin: None });
        self.start_attempt(ctx, key);
    }

    fn on_response(&mut self, ctx: &mut Ctx<Kubernetes>, out: &mut LockEvents, resp: ApiResponse) {
        let found = self.v.electors.iter_mut().find(|(_, e)| e.pending.is_some_and(|p| p.id == resp.id));
        let Some((&key, e)) = found else { return };
        let pending = e.pending.take().expect("found by its pending request");
        ctx.cancel_timer(pending.timer);
        self.call_done(ctx, out, key, pending.call, Some(resp.result));
    }

    /// The call in flight for `key` returned (`None`: timed out).
    fn call_done(
        &mut self,
        ctx: &mut Ctx<Kubernetes>,
        out: &mut LockEvents,
        key: LockKey,
        call: Call,
        result: Option<Result<Lease, ApiError>>,
    ) {
        if call == Call::Release {
            return self.released(ctx, out, key, result);
        }
        let me = self.me();
        let Volatile { conn, electors, .. } = &mut self.v;
        let Some(e) = electors.get_mut(&key) else { return };
        if let Some(outcome) = e.advance(ctx, &self.cfg, me, conn, call, result) {
            e.attempt = None;
            self.attempt_done(ctx, out, key, outcome);
        }
    }

    /// `tryAcquireOrRenew` returned: the acquire or renew loop goes on.
    fn attempt_done(&mut self, ctx: &mut Ctx<Kubernetes>, out: &mut LockEvents, key: LockKey, outcome: Outcome) {
        let now = ctx.now_mono_ns();
        let period = self.cfg.retry_period_ns;
        let Some(e) = self.v.electors.get_mut(&key) else { return };
        match (e.stage, outcome) {
            (Stage::Acquiring, Outcome::Won) => {
                // `OnStartedLeading`, then `renew`, whose `wait.Until` polls at once.
                e.stage = Stage::Leading;
                let token = e.observed.transitions;
                ctx.note(|| format!("lease {key}: acquired, transitions {token}"));
                out.push(LockEvent::Granted { key, token: Some(token) });
                self.start_poll(ctx, key);
            }
            (Stage::Acquiring, _) => {
                if matches!(outcome, Outcome::Held | Outcome::Conflict) {
                    out.push(LockEvent::Refused { key });
                }
                let after = jitter(ctx, period);
                e.retry = Some(ctx.set_timer(after, ClientTimer::Retry { key }));
            }
            (Stage::Leading, Outcome::Won) => {
                // The poll succeeded; `wait.Until` runs it again RetryPeriod from now.
                if let Some(p) = e.poll.take() {
                    ctx.cancel_timer(p.deadline);
                }
                ctx.note(|| format!("lease {key}: renewed"));
                e.retry = Some(ctx.set_timer(period, ClientTimer::Retry { key }));
            }
            (Stage::Leading, _) => {
                // The poll tries again at its ticker's next tick (started when its first attempt
                // returned; a tick during an attempt is dropped).
                let Some(poll) = e.poll.as_mut() else { return };
                let origin = *poll.ticker_origin.get_or_insert(now);
                let next = origin + ((now - origin) / period + 1) * period;
                e.retry = Some(ctx.set_timer(next - now, ClientTimer::Retry { key }));
            }
            (Stage::Releasing { .. }, _) => {}
        }
    }

    /// Leadership ends (the application's `unlock()`, or the renew deadline): `release()` when
    /// `ReleaseOnCancel` and this identity is the observed holder, then tell the application.
    fn stop_leading(&mut self, ctx: &mut Ctx<Kubernetes>, out: &mut LockEvents, key: LockKey, then: Then) {
        let me = self.me();
        let Volatile { conn, electors, .. } = &mut self.v;
        let Some(e) = electors.get_mut(&key) else { return };
        e.cancel_timers(ctx);
        let cached = e.cached.filter(|_| self.cfg.release_on_cancel && e.is_leader(me));
        let Some(cached) = cached else {
            return self.finish(ctx, out, key, then);
        };
        let now_us = ctx.now_wall_ns().div_euclid(1_000);
        let spec = LeaseSpec {
            holder: None,
            lease_duration_secs: 1,
            acquire_time_us: now_us,
            renew_time_us: now_us,
            transitions: e.observed.transitions,
        };
        e.stage = Stage::Releasing { then };
        let verb = Verb::Update { spec, resource_version: cached.resource_version };
        e.request(ctx, &self.cfg, conn, Call::Release, verb);
    }

    /// `release()` returned.
    fn released(
        &mut self,
        ctx: &mut Ctx<Kubernetes>,
        out: &mut LockEvents,
        key: LockKey,
        result: Option<Result<Lease, ApiError>>,
    ) {
        let Some(e) = self.v.electors.get(&key) else { return };
        let Stage::Releasing { then } = e.stage else { return };
        match result {
            Some(Ok(_)) => ctx.note(|| format!("lease {key}: released")),
            Some(Err(err)) => ctx.note(|| format!("lease {key}: failed to release lock: {err:?}")),
            None => ctx.note(|| format!("lease {key}: failed to release lock: timeout")),
        }
        self.finish(ctx, out, key, then);
    }

    /// `Run` returns: the elector is gone and the application is told.
    fn finish(&mut self, ctx: &mut Ctx<Kubernetes>, out: &mut LockEvents, key: LockKey, then: Then) {
        if let Some(mut e) = self.v.electors.remove(&key) {
            e.cancel_timers(ctx);
        }
        match then {
            Then::Released => out.push(LockEvent::Released { key }),
            Then::Lost => {
                ctx.note(|| format!("lease {key}: OnStoppedLeading"));
                out.push(LockEvent::Lost { key, honour: true });
            }
        }
    }

    fn on_client_timer(&mut self, ctx: &mut Ctx<Kubernetes>, out: &mut LockEvents, timer: TimerId, t: ClientTimer) {
        match t {
            ClientTimer::Retry { key } => {
                let Some(e) = self.v.electors.get_mut(&key) else { return };
                if e.retry != Some(timer) {
                    return;
                }
                e.retry = None;
                match e.stage {
                    Stage::Acquiring => self.start_attempt(ctx, key),
                    // A tick of the running poll, or `wait.Until`'s next poll.
                    Stage::Leading if e.poll.is_some() => self.start_attempt(ctx, key),
                    Stage::Leading => self.start_poll(ctx, key),
                    Stage::Releasing { .. } => {}
                }
            }
            ClientTimer::RequestTimeout { key } => {
                let Some(e) = self.v.electors.get_mut(&key) else { return };
                let Some(pending) = e.pending.filter(|p| p.timer == timer) else { return };
                e.pending = None;
                ctx.note(|| format!("lease {key}: request #{} timed out", pending.id));
                self.v.conn.move_on();
                self.call_done(ctx, out, key, pending.call, None);
            }
            ClientTimer::RenewDeadline { key } => {
                let Some(e) = self.v.electors.get_mut(&key) else { return };
                if e.poll.is_none_or(|p| p.deadline != timer) {
                    return;
                }
                e.poll = None;
                // The poll's context is done: the request in flight is cancelled and the poll
                // fails; `renew` returns.
                ctx.note(|| format!("lease {key}: failed to renew within the renew deadline"));
                self.stop_leading(ctx, out, key, Then::Lost);
            }
        }
    }
}

impl Durable for KubernetesClient {
    /// A client library keeps only its configuration and index.
    type Disk = (ClientConfig, u32);
    fn into_disk(self, _crash: &Crash) -> Self::Disk {
        (self.cfg, self.index)
    }
    fn from_disk((cfg, index): Self::Disk) -> Self {
        KubernetesClient { cfg, index, v: Volatile::default() }
    }
}

impl LockClient<Kubernetes> for KubernetesClient {
    fn as_fingerprint(&self) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(self)
    }

    fn on_start(&mut self, ctx: &mut Ctx<Kubernetes>, _out: &mut LockEvents) {
        let servers = (0..self.cfg.servers)
            .map(|i| ctx.node_named(&format!("server-{i}")).expect("API server exists"))
            .collect::<Vec<_>>();
        let endpoint = self.index as usize % servers.len();
        // `hostname + "_" + uuid.NewUUID()`, new at every process start.
        let uuid = ctx.rng().gen::<u32>();
        self.v.me = Some(Identity { client: self.index, uuid });
        // Request ids start from the incarnation's uuid, so an answer to a call the previous
        // incarnation made (still in flight after a short crash) never matches a new call:
        // a restarted process has new connections and never sees those answers.
        self.v.conn = Conn { servers, endpoint, next_id: u64::from(uuid) << 32 };
    }

    fn acquire(&mut self, ctx: &mut Ctx<Kubernetes>, _out: &mut LockEvents, key: LockKey, _mode: LockMode) {
        // `RunOrDie`: a new LeaderElector, whose acquire loop tries at once.
        if let Some(mut old) = self.v.electors.insert(key, Elector::new(key)) {
            old.cancel_timers(ctx);
        }
        self.start_attempt(ctx, key);
    }

    fn release(&mut self, ctx: &mut Ctx<Kubernetes>, out: &mut LockEvents, key: LockKey) {
        let stage = self.v.electors.get(&key).map(|e| e.stage);
        match stage {
            // `Run`'s context is cancelled: renew returns and releases.
            Some(Stage::Leading) => self.stop_leading(ctx, out, key, Then::Released),
            // Leadership already ended and `release()` is in flight: unlock returns with it.
            Some(Stage::Releasing { .. }) => {
                if let Some(e) = self.v.electors.get_mut(&key) {
                    e.stage = Stage::Releasing { then: Then::Released };
                }
            }
            Some(Stage::Acquiring) => self.finish(ctx, out, key, Then::Released),
            None => out.push(LockEvent::Released { key }),
        }
    }

    fn cancel(&mut self, ctx: &mut Ctx<Kubernetes>, _out: &mut LockEvents, key: LockKey) {
        // The acquire loop's context is cancelled; a request in flight is abandoned (if the
        // server applied it, the Lease names this client until it expires).
        if matches!(self.v.electors.get(&key), Some(e) if e.stage == Stage::Acquiring) {
            if let Some(mut e) = self.v.electors.remove(&key) {
                e.cancel_timers(ctx);
            }
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<Kubernetes>, out: &mut LockEvents, _from: NodeId, msg: KubernetesMsg) {
        match msg {
            KubernetesMsg::Response(resp) => self.on_response(ctx, out, resp),
            KubernetesMsg::Request(_) | KubernetesMsg::ToStore(_) | KubernetesMsg::FromStore(_) => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<Kubernetes>, out: &mut LockEvents, timer: TimerId, tag: KubernetesTimer) {
        match tag {
            KubernetesTimer::Client(t) => self.on_client_timer(ctx, out, timer, t),
        }
    }

    fn on_reset(&mut self, ctx: &mut Ctx<Kubernetes>, out: &mut LockEvents, peer: NodeId) {
        // The API server's process died: Go's HTTP/2 transport sees the connection close and
        // every request in flight on it returns an error at once (net/http2 `ClientConn` closes
        // its streams with the read error; client-go `rest.Request.Do` returns it), not after the
        // request timeout. `tryAcquireOrRenew` fails and the elector tries again at its retry
        // period (client-go 1.31 `tools/leaderelection/leaderelection.go`, `acquire` / `renew`
        // under `wait.JitterUntil` / `PollImmediateUntil` with `RetryPeriod`). The next request
        // dials another API server. Resets from a server already left behind change nothing.
        let Some(&current) = self.v.conn.servers.get(self.v.conn.endpoint) else { return };
        if peer != current {
            return;
        }
        self.v.conn.move_on();
        let keys: Vec<LockKey> = self.v.electors.keys().copied().collect();
        for key in keys {
            let Some(e) = self.v.electors.get_mut(&key) else { continue };
            let Some(pending) = e.pending.take() else { continue };
            ctx.cancel_timer(pending.timer);
            ctx.note(|| format!("lease {key}: request #{} failed: connection reset", pending.id));
            self.call_done(ctx, out, key, pending.call, None);
        }
    }
}
