//! What `sim compare` measures before it simulates, so that the simulated side describes this
//! machine: the loopback round trip (a TCP echo on 127.0.0.1) and a real server's service time
//! per request (the median `SET` round trip on a fresh `redis-server`, less the loopback round
//! trip). The simulation then runs with half the round trip as its network latency and the
//! measured service time as the model's `service_ms`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::servers;
use crate::supervisor::Supervisor;

/// The figures measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// Median loopback TCP round trip, milliseconds.
    pub rtt_ms: f64,
    /// Median service time of one request on the real server, milliseconds (`None`: not measured
    /// for this model).
    pub service_ms: Option<f64>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median round trip of `n` one-byte messages over a loopback TCP connection, milliseconds.
pub fn loopback_rtt_ms(n: usize) -> Result<f64, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let echo = std::thread::spawn(move || {
        if let Ok((mut c, _)) = listener.accept() {
            let _ = c.set_nodelay(true);
            let mut b = [0u8; 1];
            while c.read_exact(&mut b).is_ok() {
                if c.write_all(&b).is_err() {
                    return;
                }
            }
        }
    });
    let mut c = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    c.set_nodelay(true).map_err(|e| e.to_string())?;
    c.set_read_timeout(Some(Duration::from_secs(2))).map_err(|e| e.to_string())?;
    let mut samples = Vec::with_capacity(n);
    let mut b = [7u8; 1];
    for _ in 0..n {
        let t = Instant::now();
        c.write_all(&b).and_then(|_| c.read_exact(&mut b)).map_err(|e| e.to_string())?;
        samples.push(t.elapsed().as_secs_f64() * 1e3);
    }
    drop(c);
    let _ = echo.join();
    Ok(median(samples))
}

/// The median round trip of `n` `SET` commands on a fresh `redis-server`, milliseconds.
pub fn redis_set_rtt_ms(n: usize) -> Result<f64, String> {
    let root = std::env::temp_dir().join(format!("locksim-calibrate-{}", std::process::id()));
    let mut sup = Supervisor::default();
    let mut server = servers::redis_server(&root, "server-0", "none")?;
    server.start(&mut sup)?;
    let result = (|| {
        let client = redis::Client::open(format!("redis://{}/", server.addr())).map_err(|e| e.to_string())?;
        let mut con = client.get_connection_with_timeout(Duration::from_secs(2)).map_err(|e| e.to_string())?;
        let mut samples = Vec::with_capacity(n);
        for i in 0..n + 100 {
            let t = Instant::now();
            redis::cmd("SET").arg("calibrate").arg(i).query::<()>(&mut con).map_err(|e| e.to_string())?;
            if i >= 100 {
                samples.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        Ok(median(samples))
    })();
    sup.stop_all();
    let _ = std::fs::remove_dir_all(&root);
    result
}

/// Measures this machine for `model` (a model backed by `redis-server` gets its service time).
pub fn calibrate(model: &str) -> Result<Calibration, String> {
    let rtt_ms = loopback_rtt_ms(500)?;
    let service_ms = match model {
        "redis" | "redlock" => Some((redis_set_rtt_ms(2000)? - rtt_ms).max(0.001)),
        _ => None,
    };
    Ok(Calibration { rtt_ms, service_ms })
}
