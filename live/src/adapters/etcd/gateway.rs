//! etcd's gRPC-JSON gateway, as the `etcd` adapter and backend speak it: HTTP/1.1 `POST`s of
//! JSON to `/v3/...` on a member's client port (etcd 3.4 serves the gateway there, on by default:
//! `--enable-grpc-gateway`), through `hyper`'s HTTP/1 client connection on tokio.
//!
//! The gateway's JSON is protobuf's: `int64`/`uint64` fields are strings, `bytes` fields (keys,
//! values) are base64, and a field at its default (0, false, empty) is left out. A unary call's
//! answer is the response message itself; a streaming call's (`lease/keepalive`, `watch`) is one
//! `{"result": …}` per line. An error is `{"error": …, "message": …, "code": <gRPC code>}` with
//! the HTTP status the gateway maps the code to (in a stream: `{"error": {"grpc_code": …,
//! "message": …}}`).
//!
//! Connections: a [`Pool`] per member holds the idle ones; each call takes one (or opens one),
//! so calls in flight to one member run side by side, as gRPC's streams do on its one HTTP/2
//! connection. A call dropped before its answer (its task aborted) drops its connection, which
//! closes it: etcd's HTTP server then cancels the request's context, which the gateway passes on
//! to its gRPC call, as grpc-go's `RST_STREAM` would.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;
use tokio::task::AbortHandle;

/// Why a call has no answer from the member.
#[derive(Debug)]
pub enum Failure {
    /// The connection failed (refused, reset, closed before the answer): the member's process
    /// is down or died.
    Connection(String),
    /// The member answered something that is not the gateway's JSON.
    Protocol(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Connection(m) => write!(f, "connection failed: {m}"),
            Failure::Protocol(m) => write!(f, "unexpected answer: {m}"),
        }
    }
}

/// An error the server answered (a gRPC status, through the gateway).
#[derive(Clone, Debug, PartialEq)]
pub struct GrpcError {
    /// The gRPC status code (5: `NotFound`, 14: `Unavailable`, …).
    pub code: u64,
    /// etcd's message (`etcdserver: requested lease not found`, …).
    pub message: String,
}

/// One open HTTP/1.1 connection to a member. Dropping it closes the socket (its driver task is
/// aborted with it).
pub struct Conn {
    sender: SendRequest<Full<Bytes>>,
    driver: AbortHandle,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// Opens a connection to `addr` (`127.0.0.1:port`). Must run inside the tokio runtime.
pub async fn connect(addr: &str) -> Result<Conn, Failure> {
    let stream = TcpStream::connect(addr).await.map_err(|e| Failure::Connection(e.to_string()))?;
    // Small requests, answered at once: Nagle would hold each behind the previous one's ACK.
    stream.set_nodelay(true).map_err(|e| Failure::Connection(e.to_string()))?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| Failure::Connection(e.to_string()))?;
    let driver = tokio::spawn(async move {
        let _ = conn.await;
    })
    .abort_handle();
    Ok(Conn { sender, driver })
}

/// The idle connections to one member.
pub struct Pool {
    addr: String,
    idle: Mutex<Vec<Conn>>,
}

impl Pool {
    /// An empty pool for the member at `addr`.
    pub fn new(addr: &str) -> Arc<Pool> {
        Arc::new(Pool { addr: addr.to_string(), idle: Mutex::new(Vec::new()) })
    }

    /// The member's `127.0.0.1:port`.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// An idle connection still open, or a new one. A connection the member closed while idle
    /// (its process died: the driver read the end of stream) is dropped, never reused.
    async fn take(&self) -> Result<Conn, Failure> {
        loop {
            let conn = self.idle.lock().expect("pool lock").pop();
            match conn {
                Some(c) if !c.sender.is_closed() => return Ok(c),
                Some(_) => continue,
                None => return connect(&self.addr).await,
            }
        }
    }

    fn put(&self, conn: Conn) {
        self.idle.lock().expect("pool lock").push(conn);
    }

    /// `POST path` with `body`; the answer's JSON, or the server's error. A unary call's answer
    /// is the message; a streaming call's first `{"result": …}` line is unwrapped.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Result<Value, GrpcError>, Failure> {
        let mut conn = self.take().await?;
        let resp = send(&mut conn, &self.addr, path, body).await?;
        let status = resp.status();
        let bytes = resp.into_body().collect().await.map_err(|e| Failure::Connection(e.to_string()))?.to_bytes();
        // The whole answer is read: the connection can carry the next call.
        self.put(conn);
        let text = std::str::from_utf8(&bytes).map_err(|e| Failure::Protocol(e.to_string()))?;
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let json: Value = serde_json::from_str(first)
            .map_err(|e| Failure::Protocol(format!("{path}: HTTP {status}: {e}: {}", text.trim())))?;
        Ok(unwrap_answer(json))
    }
}

async fn send(conn: &mut Conn, addr: &str, path: &str, body: &Value) -> Result<hyper::Response<Incoming>, Failure> {
    let req = hyper::Request::post(path)
        .header(hyper::header::HOST, addr)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| Failure::Protocol(e.to_string()))?;
    conn.sender.ready().await.map_err(|e| Failure::Connection(e.to_string()))?;
    conn.sender.send_request(req).await.map_err(|e| Failure::Connection(e.to_string()))
}

/// A message of the gateway's (unary answer or stream line) as the answer or the server's error.
pub fn unwrap_answer(json: Value) -> Result<Value, GrpcError> {
    if let Some(r) = json.get("result") {
        return Ok(r.clone());
    }
    match json.get("error") {
        // A stream's error: {"error": {"grpc_code": …, "message": …}}.
        Some(Value::Object(e)) => Err(GrpcError {
            code: e.get("grpc_code").map_or(0, num),
            message: e.get("message").and_then(Value::as_str).unwrap_or_default().to_string(),
        }),
        // A unary call's: {"error": "…", "message": "…", "code": …}.
        Some(e) => Err(GrpcError {
            code: json.get("code").map_or(0, num),
            message: json.get("message").and_then(Value::as_str).or(e.as_str()).unwrap_or_default().to_string(),
        }),
        None => Ok(json),
    }
}

/// Opens a streaming call (`watch`) on its own connection and hands each line's JSON to
/// `on_line` as it arrives. Returns when the stream ends: the member closed it or died (a stream
/// this side gives up on is dropped, not ended).
pub async fn stream(addr: &str, path: &str, body: &Value, mut on_line: impl FnMut(Value)) -> Failure {
    let mut conn = match connect(addr).await {
        Ok(c) => c,
        Err(f) => return f,
    };
    let resp = match send(&mut conn, addr, path, body).await {
        Ok(r) => r,
        Err(f) => return f,
    };
    let mut body = resp.into_body();
    let mut buf: Vec<u8> = Vec::new();
    loop {
        match body.frame().await {
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else { continue };
                buf.extend_from_slice(&data);
                while let Some(n) = buf.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=n).collect();
                    match serde_json::from_slice::<Value>(&line) {
                        Ok(v) => on_line(v),
                        Err(_) if line.iter().all(u8::is_ascii_whitespace) => {}
                        Err(e) => return Failure::Protocol(format!("{path}: {e}")),
                    }
                }
            }
            Some(Err(e)) => return Failure::Connection(e.to_string()),
            None => return Failure::Connection(format!("{path}: the stream ended")),
        }
    }
}

/// One call from outside the runtime (the backend's readiness and leader questions): a fresh
/// connection, answered within `limit`.
pub fn blocking_post(addr: &str, path: &str, body: &Value, limit: Duration) -> Result<Value, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;
    rt.block_on(async {
        let pool = Pool::new(addr);
        match tokio::time::timeout(limit, pool.post(path, body)).await {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(e))) => Err(format!("{addr}{path}: {} (gRPC code {})", e.message, e.code)),
            Ok(Err(f)) => Err(format!("{addr}{path}: {f}")),
            Err(_) => Err(format!("{addr}{path}: no answer within {} ms", limit.as_millis())),
        }
    })
}

/// A protobuf JSON integer: a string (`int64`, `uint64`), a number (`int32`), or absent (0).
pub fn num(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.parse().unwrap_or(0),
        Value::Number(n) => n.as_u64().unwrap_or(0),
        _ => 0,
    }
}

/// The integer field `field` of `v` (0 when absent, protobuf's default).
pub fn field(v: &Value, field: &str) -> u64 {
    v.get(field).map_or(0, num)
}

/// A key or value as the gateway carries it.
pub fn b64(s: &str) -> String {
    STANDARD.encode(s.as_bytes())
}

/// A base64 key read back (lossy for bytes that are not UTF-8; the model's keys are ASCII).
pub fn unb64(s: &str) -> Option<String> {
    STANDARD.decode(s).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The end of the range holding every key that starts with `prefix` (clientv3
/// `GetPrefixRangeEnd`: the prefix with its last byte below 0xff incremented, the rest cut).
pub fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    // Every byte 0xff (or empty): "\0", every key from the prefix on.
    vec![0]
}

/// [`prefix_end`] as the gateway carries it.
pub fn b64_prefix_end(prefix: &str) -> String {
    STANDARD.encode(prefix_end(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_gateways_json_reads_back() {
        assert_eq!(num(&json!("16322613195064898111")), 16322613195064898111);
        assert_eq!(num(&json!(5)), 5);
        assert_eq!(field(&json!({"TTL": "2"}), "TTL"), 2);
        assert_eq!(field(&json!({"ID": "123"}), "TTL"), 0, "a default field is left out");
        assert_eq!(prefix_end("/lock/0/"), b"/lock/00".to_vec());
        assert_eq!(unb64(&b64("/lock/0/2087a2103a61cb06")).unwrap(), "/lock/0/2087a2103a61cb06");
        // Answers as etcd 3.4.23's gateway gives them (captured from a real member).
        let ok = json!({"result": {"header": {"revision": "2"}, "ID": "7", "TTL": "5"}});
        assert_eq!(field(&unwrap_answer(ok).unwrap(), "TTL"), 5);
        let unary = json!({"error": "etcdserver: requested lease not found",
            "message": "etcdserver: requested lease not found", "code": 5});
        assert_eq!(
            unwrap_answer(unary).unwrap_err(),
            GrpcError { code: 5, message: "etcdserver: requested lease not found".into() }
        );
        let streamed = json!({"error": {"grpc_code": 14, "http_code": 503, "message": "etcdserver: no leader"}});
        assert_eq!(unwrap_answer(streamed).unwrap_err().code, 14);
    }
}
