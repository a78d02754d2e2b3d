//! The protected resource of a live run, served by `sim live` itself on loopback: the
//! simulator's own resource node (a counter per key, judged unfenced and fenced), hosted on the
//! machine's clock. Clients send JSON lines ([`crate::client::ToResource`]) and get the replies
//! back on the same connection; every read and write is recorded with the shared clock.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use locksim_simulator::history::Stamped;
use locksim_simulator::process::{NodeKind, Protocol};
use locksim_simulator::realtime::{Output, RealtimeNode};
use locksim_simulator::rng::stream;
use locksim_simulator::wire::Wire;

use crate::client::ToResource;
use crate::clock::Epoch;

/// The resource speaks no model's protocol: only the workload's resource messages.
pub struct ResourceOnly;

impl Protocol for ResourceOnly {
    type Msg = ();
    type Timer = ();
}

struct Shared {
    node: RealtimeNode<ResourceOnly>,
    events: Vec<Stamped>,
}

/// The resource server of one live run; stops accepting when dropped.
pub struct ResourceServer {
    port: u16,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
}

impl ResourceServer {
    /// Serves keys `0..locks` for a run whose nodes are `names`, on a free loopback port.
    pub fn start(locks: u32, names: &[(String, NodeKind)], epoch: Epoch) -> Result<Self, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot serve the resource: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let me = names.len() - 1;
        let node = RealtimeNode::resource(locks, stream(0, "resource", "model"), names, me);
        let shared = Arc::new(Mutex::new(Shared { node, events: Vec::new() }));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (shared.clone(), stop.clone());
        std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let s = s.clone();
                        std::thread::spawn(move || serve(conn, s, epoch));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Ok(ResourceServer { port, shared, stop })
    }

    /// `127.0.0.1:port`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Every read and write recorded so far.
    pub fn take_events(&self) -> Vec<Stamped> {
        std::mem::take(&mut self.shared.lock().expect("resource lock").events)
    }
}

impl Drop for ResourceServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(conn: TcpStream, shared: Arc<Mutex<Shared>>, epoch: Epoch) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_nodelay(true);
    let Ok(mut writer) = conn.try_clone() else { return };
    for line in BufReader::new(conn).lines() {
        let Ok(line) = line else { return };
        let Ok(req) = serde_json::from_str::<ToResource>(&line) else { continue };
        let replies: Vec<String> = {
            let mut s = shared.lock().expect("resource lock");
            let now = epoch.readings();
            let me = s.node.me();
            let outputs = s.node.message(now, req.from, Wire::Resource(req.msg));
            let mut replies = Vec::new();
            for o in outputs {
                match o {
                    Output::Record(event) => s.events.push(Stamped { at_ns: now.mono_ns, node: me, event }),
                    Output::Send { msg: Wire::Resource(r), .. } => {
                        replies.push(serde_json::to_string(&r).expect("resource reply serialises"))
                    }
                    _ => {}
                }
            }
            replies
        };
        for r in replies {
            if writeln!(writer, "{r}").is_err() {
                return;
            }
        }
    }
}
