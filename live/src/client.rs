//! A live client process (`sim live-client`, started by `sim live`, one per client): the model's
//! own client library under the shared workload driver, hosted on the machine's clock
//! ([`RealtimeNode`]), its messages carried by the model's wire adapter to the real servers and
//! by a TCP connection to the resource `sim live` serves. Every history event goes to stdout as a
//! JSON line stamped with the shared monotonic clock; the last line is a summary. The process
//! ends by itself at the run's end.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::Duration;

use locksim_simulator::history::Stamped;
use locksim_simulator::model::Model;
use locksim_simulator::process::{NodeId, NodeKind, Protocol};
use locksim_simulator::realtime::{Output, RealtimeNode};
use locksim_simulator::rng::stream;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::Setup;
use locksim_simulator::wire::{ResourceMsg, Wire};
use serde::{Deserialize, Serialize};

use crate::adapters::{Adapter, Inbound};
use crate::clock::Epoch;

/// Everything a client process is told by `sim live` (one JSON argument).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClientSpec {
    /// The scenario file (parsed again here, exactly as `sim live` parsed it).
    pub scenario: PathBuf,
    /// The row (algorithm or variant label) being run.
    pub label: String,
    /// This client's index (`client-<index>`).
    pub index: usize,
    /// The seed: the workload's and the library's random streams are the simulator's.
    pub seed: u64,
    /// The run's time origin.
    pub epoch: Epoch,
    /// When the workload stops (the run's `duration_ms`), on the run's monotonic clock.
    pub end_mono_ns: u64,
    /// The resource's `127.0.0.1:port`.
    pub resource: String,
    /// Each server's node name and `127.0.0.1:port`.
    pub servers: Vec<(String, String)>,
}

/// A client's closing line: what it sent and received, for the run's message count.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Requests sent to the servers and the resource.
    pub sent: u64,
    /// Replies and pushes received.
    pub received: u64,
}

/// One line of a client's stdout.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ClientLine {
    /// A history event.
    Event(Stamped),
    /// The closing summary.
    Summary {
        /// What it counted.
        summary: Summary,
    },
}

/// A message from a client to the resource, on the resource connection (one JSON line each).
#[derive(Debug, Serialize, Deserialize)]
pub struct ToResource {
    /// The sending client's node id.
    pub from: NodeId,
    /// The request.
    pub msg: ResourceMsg,
}

/// The node names of a run, numbered as the simulator numbers them: services, clients, resource.
pub fn node_names(services: Vec<(String, NodeKind)>, clients: usize) -> Vec<(String, NodeKind)> {
    let mut names = services;
    names.extend((0..clients).map(|i| (format!("client-{i}"), NodeKind::Client)));
    names.push(("resource".to_string(), NodeKind::Resource));
    names
}

/// Runs client `spec.index` of `run` (a row of model `M`) until the run's end.
pub fn run_typed<M: Model>(
    model: &M,
    setup: &Setup,
    run: &RunSpec,
    spec: &ClientSpec,
    make_adapter: impl FnOnce(
        &[(NodeId, String)],
        &Sender<Inbound<<M::Protocol as Protocol>::Msg>>,
    ) -> Box<dyn Adapter<<M::Protocol as Protocol>::Msg>>,
) -> Result<(), String> {
    let w = &setup.workload;
    let names = node_names(model.services(&run.params), w.clients);
    let name = format!("client-{}", spec.index);
    let me = names.iter().position(|(n, _)| *n == name).ok_or_else(|| format!("no node {name} in this run"))?;
    let resource_id = names.len() - 1;
    let lib = model
        .build(&run.params, w)
        .clients
        .into_iter()
        .nth(spec.index)
        .ok_or_else(|| format!("{name}: the model built fewer clients"))?;
    let mut node = RealtimeNode::client(
        lib,
        w.clone(),
        stream(spec.seed, &name, "workload"),
        stream(spec.seed, &name, "model"),
        &names,
        me,
    );
    let servers: Vec<(NodeId, String)> = spec
        .servers
        .iter()
        .filter_map(|(n, addr)| names.iter().position(|(m, _)| m == n).map(|id| (id, addr.clone())))
        .collect();
    let (tx, rx) = mpsc::channel();
    let mut adapter = make_adapter(&servers, &tx);
    let mut resource = ResourceLink::connect(&spec.resource, resource_id, &tx)?;

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut summary = Summary::default();
    let epoch = spec.epoch;
    let mut emit =
        |outputs: Vec<Output<<M::Protocol as Protocol>::Msg>>, summary: &mut Summary, out: &mut dyn Write| {
            for o in outputs {
                match o {
                    Output::Send { to, msg: Wire::Resource(r), .. } if to == resource_id => {
                        summary.sent += 1;
                        resource.send(me, r);
                    }
                    Output::Send { to, msg: Wire::Model(m), .. } => {
                        summary.sent += 1;
                        adapter.send(to, m);
                    }
                    Output::Send { .. } | Output::Note(_) => {}
                    Output::Record(event) => {
                        let line = ClientLine::Event(Stamped { at_ns: epoch.mono_ns(), node: me, event });
                        let _ = writeln!(out, "{}", serde_json::to_string(&line).expect("history serialises"));
                        let _ = out.flush();
                    }
                }
            }
        };
    emit(node.start(epoch.readings()), &mut summary, &mut out);
    loop {
        let now = epoch.readings();
        if now.mono_ns >= spec.end_mono_ns {
            break;
        }
        emit(node.fire_due(now), &mut summary, &mut out);
        let until = node.next_deadline().unwrap_or(u64::MAX).min(spec.end_mono_ns);
        let wait = Duration::from_nanos(until.saturating_sub(epoch.mono_ns()));
        match rx.recv_timeout(wait) {
            Ok(Inbound::Message { from, msg }) => {
                summary.received += 1;
                emit(node.message(epoch.readings(), from, msg), &mut summary, &mut out);
            }
            Ok(Inbound::Reset { peer }) => emit(node.reset(epoch.readings(), peer), &mut summary, &mut out),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let line = ClientLine::Summary { summary };
    let _ = writeln!(out, "{}", serde_json::to_string(&line).expect("summary serialises"));
    let _ = out.flush();
    Ok(())
}

/// The client's connection to the resource `sim live` serves.
struct ResourceLink {
    stream: TcpStream,
}

impl ResourceLink {
    fn connect<M: Send + 'static>(addr: &str, resource_id: NodeId, tx: &Sender<Inbound<M>>) -> Result<Self, String> {
        let stream = TcpStream::connect(addr).map_err(|e| format!("cannot reach the resource at {addr}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let reader = stream.try_clone().map_err(|e| e.to_string())?;
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { return };
                if let Ok(msg) = serde_json::from_str::<ResourceMsg>(&line) {
                    let _ = tx.send(Inbound::Message { from: resource_id, msg: Wire::Resource(msg) });
                }
            }
        });
        Ok(ResourceLink { stream })
    }

    fn send(&mut self, from: NodeId, msg: ResourceMsg) {
        let line = serde_json::to_string(&ToResource { from, msg }).expect("resource message serialises");
        let _ = writeln!(self.stream, "{line}");
    }
}
