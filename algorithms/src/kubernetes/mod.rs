//! `kubernetes`: leader election on a `coordination.k8s.io/v1` Lease, as client-go's
//! `tools/leaderelection` with `resourcelock.LeaseLock` runs it, against API servers that do
//! optimistic concurrency on `resourceVersion`.
//!
//! Module map:
//! - [`protocol`]: the Lease calls (GET, CREATE, UPDATE) and answers, the store hop, the timers
//! - [`server`]: an API server, and on `server-0` the store (etcd's stand-in) with its revisions
//! - [`client`]: the `LeaderElector`: acquire loop, renew loop and poll, release, fast path
//! - [`library`]: the `client` preset (`client-go-0.30`; `locksim-1`, the default, is the model as
//!   it was before presets): the version's defaults, cited
//!
//! Sources: client-go `leaderelection.go` and `resourcelock/leaselock.go`, `resourcelock/
//! interface.go` (kubernetes/kubernetes `staging/src/k8s.io/client-go/tools/leaderelection/`,
//! the 1.31 line, commit 0138c82), apimachinery `pkg/util/wait` (`backoff.go`: `JitterUntil`,
//! `Until`; `poll.go`: `PollImmediateUntil`) and `pkg/apis/meta/v1/time.go` (`Time.MarshalJSON`),
//! component-base `config/v1alpha1/defaults.go` (`RecommendedDefaultLeaderElectionConfiguration`:
//! 15 s, 10 s, 2 s, the defaults of kube-controller-manager and kube-scheduler), and
//! `resourcelock.NewFromKubeconfig` (the client's HTTP timeout). Each module's header says what it
//! follows.
//!
//! Each lock key is one Lease (`lease-K`); a workload client is a candidate for a Lease while it
//! acquires it, and its leader while it holds it. Expiry is judged only by candidates, on their
//! own monotonic clock, from when they last saw the record change (client-go's `observedTime`):
//! nobody compares timestamps written by another node, so clock offsets and steps do nothing and a
//! drift rate only stretches or shrinks a candidate's wait by its own error. What it cannot stop is
//! a leader that does not run: a holder paused longer than the lease duration is taken over by a
//! candidate and resumes believing it leads. The package says so: "This implementation does not
//! guarantee that only one client is acting as a leader (a.k.a. fencing)" (`leaderelection.go`,
//! package comment). The grant's token is the Lease's `leaseTransitions`, which every change of
//! holder raises by one, so a fenced resource can reject the resumed leader's writes.
//!
//! Links are HTTP/2 over TCP (client to API server, API server to etcd's gRPC): ordered.
//!
//! Where the model departs from Kubernetes (each also said where it lives):
//! - the store is one linearizable map on `server-0` (etcd is a Raft cluster; its elections and
//!   failures are the etcd model's subject), and `server-1 …` are stateless front API servers;
//! - a request lost by the network, or caught by a frozen, unreachable or lost server, costs the
//!   full HTTP timeout, after which the client moves to the next API server; one caught by a
//!   killed server process fails at once on the connection reset (the elector retries at its
//!   retry period, on the next API server);
//! - `leaseDurationSeconds` is whole seconds as in client-go; the model's other times are not
//!   rounded.

pub mod client;
mod fingerprint;
pub mod library;
pub mod protocol;
pub mod server;

use locksim_simulator::dist::Dist;
use locksim_simulator::lockclient::LockClient;
use locksim_simulator::model::{Cluster, Model, ParamKind, ParamProblem, ParamSpec, Params, Topology};
use locksim_simulator::process::{NodeKind, Process, Protocol};
use locksim_simulator::scenario::show_number;
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::ms_to_ns;

use client::{ClientConfig, KubernetesClient, JITTER_FACTOR};
use library::{Library, LIBRARIES};
use protocol::{KubernetesMsg, KubernetesTimer};
use server::{ApiServer, ServerConfig};

/// The `kubernetes` model.
pub struct Kubernetes;

/// The `kubernetes` model, as [`registry`](crate::registry) lists it.
pub static KUBERNETES: Kubernetes = Kubernetes;

impl Protocol for Kubernetes {
    type Msg = KubernetesMsg;
    type Timer = KubernetesTimer;
    fn msg_fingerprint(msg: &KubernetesMsg) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(msg)
    }
    fn timer_fingerprint(timer: &KubernetesTimer) -> Option<&dyn locksim_simulator::fingerprint::Fingerprint> {
        Some(timer)
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "client",
        kind: ParamKind::Choice(LIBRARIES),
        default: "\"client-go-0.30\"",
        meaning: "the client-go version the electors run (default client-go-0.30, the newest read): locksim-1 is the model as it was before presets (client-go's timings, but release_on_cancel = true, which client-go does only when the program sets ReleaseOnCancel); client-go-0.30 sets lease_duration_ms, renew_deadline_ms, retry_period_ms, request_timeout_ms and release_on_cancel = false unless given",
    },
    ParamSpec {
        name: "lease_duration_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "15000",
        meaning: "LeaseDuration: how long a candidate waits without seeing the record change before it takes the Lease over (written into the Lease in whole seconds; component-base default 15 s)",
    },
    ParamSpec {
        name: "renew_deadline_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "10000",
        meaning: "RenewDeadline: how long the leader's renew poll keeps retrying before it gives leadership up (component-base default 10 s)",
    },
    ParamSpec {
        name: "retry_period_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "2000",
        meaning: "RetryPeriod: the leader renews this long after its last renewal; a candidate retries after RetryPeriod × (1 + 1.2·u) (JitterUntil, JitterFactor 1.2; component-base default 2 s)",
    },
    ParamSpec {
        name: "request_timeout_ms",
        kind: ParamKind::Number { min: 1.0, max: 1e9 },
        default: "5000",
        meaning: "the leader-election client's HTTP timeout per request (resourcelock.NewFromKubeconfig: max(1 s, RenewDeadline / 2))",
    },
    ParamSpec {
        name: "release_on_cancel",
        kind: ParamKind::Bool,
        default: "true",
        meaning: "ReleaseOnCancel: unlock and a lost leadership UPDATE the Lease to an empty holder (leaseDurationSeconds 1), so a candidate can take it at its next try (false, client-go's zero value and client-go-0.30's: the Lease stays until it expires)",
    },
    ParamSpec {
        name: "servers",
        kind: ParamKind::Int { min: 1, max: 99 },
        default: "1",
        meaning: "API servers (server-0 …); the store (etcd's stand-in) lives on server-0 and the others forward to it",
    },
    ParamSpec {
        name: "service_ms",
        kind: ParamKind::Dist { min: 0.0, max: 1e6 },
        default: "0.05",
        meaning: "processing time per Lease call at the store (the API server's handling and etcd's write)",
    },
];

/// Every parameter, read once, after the `client` preset has filled what the scenario left unset
/// ([`library::resolve`]). Times stay in the scenario's milliseconds here (the checks and notes
/// quote them); [`KubernetesConfig::client_config`] converts them for the library.
#[derive(Clone, Debug)]
pub struct KubernetesConfig {
    /// `client`: the client-go version.
    pub library: Library,
    /// `lease_duration_ms`: LeaseDuration.
    pub lease_duration_ms: f64,
    /// `renew_deadline_ms`: RenewDeadline.
    pub renew_deadline_ms: f64,
    /// `retry_period_ms`: RetryPeriod.
    pub retry_period_ms: f64,
    /// `request_timeout_ms`: the HTTP timeout per request.
    pub request_timeout_ms: f64,
    /// `release_on_cancel`: ReleaseOnCancel.
    pub release_on_cancel: bool,
    /// `servers`: API servers (the store on `server-0`).
    pub servers: usize,
    /// `service_ms`: processing time per Lease call at the store.
    pub service_ms: Dist,
}

impl KubernetesConfig {
    /// The configuration the scenario's parameters give, with the `client` preset applied. Every
    /// key is in [`PARAMS`] and the parser has checked each value's type and range.
    pub fn from_params(params: &Params) -> KubernetesConfig {
        let params = &library::resolve(params);
        KubernetesConfig {
            library: Library::parse(params.str("client")),
            lease_duration_ms: params.f64("lease_duration_ms"),
            renew_deadline_ms: params.f64("renew_deadline_ms"),
            retry_period_ms: params.f64("retry_period_ms"),
            request_timeout_ms: params.f64("request_timeout_ms"),
            release_on_cancel: params.bool("release_on_cancel"),
            servers: params.int("servers") as usize,
            service_ms: params.dist("service_ms"),
        }
    }

    /// The client library's settings.
    pub fn client_config(&self) -> ClientConfig {
        ClientConfig {
            servers: self.servers,
            // `int(le.config.LeaseDuration / time.Second)` in tryAcquireOrRenew.
            lease_duration_secs: (self.lease_duration_ms / 1000.0).floor() as u32,
            renew_deadline_ns: ms_to_ns(self.renew_deadline_ms),
            retry_period_ns: ms_to_ns(self.retry_period_ms),
            request_timeout_ns: ms_to_ns(self.request_timeout_ms),
            release_on_cancel: self.release_on_cancel,
        }
    }

    /// An API server's settings.
    pub fn server_config(&self) -> ServerConfig {
        ServerConfig { service_ms: self.service_ms.clone() }
    }

    /// The API servers' names and kinds, in the order [`KubernetesConfig::cluster`] builds them.
    pub fn services(&self) -> Vec<(String, NodeKind)> {
        (0..self.servers).map(|i| (format!("server-{i}"), NodeKind::Server)).collect()
    }

    /// The cluster this configuration runs for `workload`: the API servers (the store on
    /// `server-0`) and one elector per client.
    pub fn cluster(&self, workload: &WorkloadSpec) -> Cluster<Kubernetes> {
        let server_cfg = self.server_config();
        let services = (0..self.servers)
            .map(|i| Box::new(ApiServer::new(server_cfg.clone(), i == 0)) as Box<dyn Process<Kubernetes>>)
            .collect();
        let client_cfg = self.client_config();
        let clients = (0..workload.clients)
            .map(|i| Box::new(KubernetesClient::new(i, client_cfg.clone())) as Box<dyn LockClient<Kubernetes>>)
            .collect();
        Cluster { services, clients }
    }
}

impl Model for Kubernetes {
    type Protocol = Kubernetes;

    fn name(&self) -> &'static str {
        "kubernetes"
    }

    fn summary(&self) -> &'static str {
        "client-go leader election on a coordination.k8s.io/v1 Lease (LeaseLock): resourceVersion-checked updates, expiry judged by candidates on their own clocks; token = leaseTransitions"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    /// `NewLeaderElector` refuses these configurations ("leaseDuration must be greater than
    /// renewDeadline", "renewDeadline must be greater than retryPeriod*JitterFactor").
    fn validate(&self, params: &Params, _workload: &WorkloadSpec) -> Vec<ParamProblem> {
        let cfg = KubernetesConfig::from_params(params);
        let mut problems = Vec::new();
        let (lease, renew, retry) = (cfg.lease_duration_ms, cfg.renew_deadline_ms, cfg.retry_period_ms);
        if lease <= renew {
            let (lease, renew) = (show_number(lease), show_number(renew));
            problems.push(ParamProblem {
                key: "lease_duration_ms".into(),
                message: format!(
                    "client-go's NewLeaderElector requires leaseDuration > renewDeadline: lease_duration_ms = {lease} is not above renew_deadline_ms = {renew}"
                ),
            });
        }
        if renew <= JITTER_FACTOR * retry {
            problems.push(ParamProblem {
                key: "renew_deadline_ms".into(),
                message: format!(
                    "client-go's NewLeaderElector requires renewDeadline > retryPeriod × 1.2 (JitterFactor): renew_deadline_ms = {} is not above {}",
                    show_number(renew),
                    show_number(JITTER_FACTOR * retry)
                ),
            });
        }
        problems
    }

    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String> {
        let cfg = KubernetesConfig::from_params(params);
        let mut notes = vec![
            "the store behind the API servers is one linearizable map on server-0 (etcd's stand-in: one revision counter, resourceVersion-checked updates); etcd's own replication, elections and failures are not modelled".to_string(),
        ];
        if cfg.library != Library::Locksim {
            notes.push(format!(
                "client = \"{}\" sets lease_duration_ms, renew_deadline_ms, retry_period_ms, request_timeout_ms and release_on_cancel where the scenario does not (now: release_on_cancel = {}, request_timeout_ms = {}); a value the scenario sets is kept",
                cfg.library.name(),
                cfg.release_on_cancel,
                cfg.request_timeout_ms,
            ));
        }
        let servers = cfg.servers;
        if servers > 1 {
            notes.push(format!(
                "server-1 … server-{}: front API servers that forward every Lease call to server-0 and keep no state; a client talks to one of them and moves to the next after a request timeout (what a load balancer or a re-dial would do)",
                servers - 1
            ));
        }
        notes.push(
            "a request lost in the network, or caught by a frozen or unreachable API server (or a lost host), costs the whole request_timeout_ms; one caught by a killed API server process fails at once on the connection reset".into(),
        );
        let lease_ms = cfg.lease_duration_ms;
        if lease_ms < 1000.0 {
            notes.push(format!(
                "lease_duration_ms = {lease_ms} is under a second: client-go writes leaseDurationSeconds = 0 into the Lease, so every candidate sees it expired at once"
            ));
        } else if lease_ms % 1000.0 != 0.0 {
            notes.push(format!(
                "lease_duration_ms = {lease_ms} is not whole seconds: client-go writes int(LeaseDuration / time.Second) = {} s into the Lease, and candidates wait that long",
                (lease_ms / 1000.0).floor()
            ));
        }
        if cfg.release_on_cancel {
            notes.push(
                "release is one UPDATE of the Lease last read or written (client-go 1.31): a conflict with a renewal it cancelled leaves the Lease held until it expires (kubernetes/kubernetes #131867); the later retry after a GET (PR #137988) is not modelled".into(),
            );
        }
        if workload.reentry > 0.0 {
            notes.push(
                "client-go's leader election is not reentrant (a second Run with the same Lease is a second candidate): nested acquisitions are skipped".into(),
            );
        }
        notes
    }

    fn fenced(&self, _params: &Params) -> bool {
        true
    }

    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        KubernetesConfig::from_params(params).services()
    }

    fn topology(&self, _params: &Params) -> Topology {
        Topology { ordered_links: true, leaderless: false }
    }

    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Kubernetes> {
        KubernetesConfig::from_params(params).cluster(workload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locksim_simulator::model::ParamValue;

    fn params(lease: f64, renew: f64, retry: f64) -> Params {
        let mut p = Params::default();
        for spec in PARAMS {
            let v = match spec.kind {
                ParamKind::Bool => ParamValue::Bool(spec.default == "true"),
                ParamKind::Int { .. } => ParamValue::Int(spec.default.parse().unwrap()),
                ParamKind::Choice(_) => ParamValue::Str(spec.default.trim_matches('"').into()),
                _ => ParamValue::Num(spec.default.parse().unwrap()),
            };
            p.values.insert(spec.name.to_string(), v);
        }
        // Set as a scenario sets them: explicit, so the default preset (client-go-0.30) keeps them.
        p.set_explicit("lease_duration_ms", ParamValue::Num(lease));
        p.set_explicit("renew_deadline_ms", ParamValue::Num(renew));
        p.set_explicit("retry_period_ms", ParamValue::Num(retry));
        p
    }

    /// `NewLeaderElector`'s checks: leaseDuration > renewDeadline > 1.2 × retryPeriod.
    #[test]
    fn validation_follows_new_leader_elector() {
        let facts = WorkloadSpec { read_fraction: 0.0, reentry: 0.0, clients: 2, ..WorkloadSpec::default() };
        let keys = |p: &Params| KUBERNETES.validate(p, &facts).into_iter().map(|p| p.key).collect::<Vec<_>>();
        assert!(keys(&params(15_000.0, 10_000.0, 2_000.0)).is_empty());
        assert_eq!(keys(&params(10_000.0, 10_000.0, 2_000.0)), ["lease_duration_ms"]);
        assert_eq!(keys(&params(15_000.0, 2_400.0, 2_000.0)), ["renew_deadline_ms"]);
        assert!(keys(&params(15_000.0, 2_401.0, 2_000.0)).is_empty());
    }

    /// `int(LeaseDuration / time.Second)` is what goes into the Lease.
    #[test]
    fn lease_duration_is_written_in_whole_seconds() {
        let secs = |lease_ms| {
            KubernetesConfig::from_params(&params(lease_ms, 10_000.0, 2_000.0)).client_config().lease_duration_secs
        };
        assert_eq!(secs(15_000.0), 15);
        assert_eq!(secs(15_999.0), 15);
        let facts = WorkloadSpec { read_fraction: 0.0, reentry: 0.0, clients: 2, ..WorkloadSpec::default() };
        let notes = KUBERNETES.limitations(&params(15_500.0, 10_000.0, 2_000.0), &facts);
        assert!(notes.iter().any(|n| n.contains("= 15 s into the Lease")), "{notes:?}");
    }
}
