// Reference client: node-redlock 5 (npm `redlock`, with `ioredis`, pinned in package-lock.json),
// driven by the workload of reference/PROTOCOL.md.
//
// One ioredis connection per master (ioredis's defaults: reconnect for ever, an offline queue,
// 20 retries per request). `acquire` runs the lock script on every master, retrying `retries`
// times after `retry_delay_ms` (retryJitter 0, as the model's fixed delay); it fails with
// ExecutionError when no quorum voted for it (`refused`). The lock's validity is
// `lock.expiration` (start + ttl - drift, on Date.now()): with the row's respect_validity the
// application checks it before the write and abandons the section when it has passed.
// No fencing token; nothing tells the application the lock was lost (no auto-extension used).
"use strict";
const fs = require("fs");
const net = require("net");
const Redis = require("ioredis");
const Redlock = require("redlock").default;
const { ExecutionError } = require("redlock");

const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const end = BigInt(spec.end_mono_ns);
const now = () => process.hrtime.bigint(); // CLOCK_MONOTONIC on Linux (libuv's uv_hrtime)

function emit(event, fields = {}) {
  const body = JSON.stringify({ event, ...fields });
  process.stdout.write(`{"mono_ns":${now()},${body.slice(1)}\n`);
}

// Sleeps until `at` (CLOCK_MONOTONIC ns, a BigInt), never past the end.
const sleepUntil = (at) => {
  const until = at < end ? at : end;
  const ms = Number(until - now()) / 1e6;
  return new Promise((r) => setTimeout(r, Math.max(ms, 0)));
};
const sleepNs = (ns) => sleepUntil(now() + BigInt(ns));

// The run's end: emit done and exit at once, whatever is in flight.
setTimeout(() => {
  emit("done");
  process.exit(0);
}, Math.max(Number(end - now()) / 1e6, 0));

// The connection to sim live's resource: JSON lines, answers matched by kind and grant.
class Resource {
  constructor(addr, node) {
    const [host, port] = addr.split(":");
    this.node = node;
    this.pending = [];
    this.waiters = [];
    this.buf = "";
    this.sock = net.connect({ host, port: Number(port), noDelay: true });
    this.sock.on("data", (d) => {
      this.buf += d.toString();
      let i;
      while ((i = this.buf.indexOf("\n")) >= 0) {
        const reply = JSON.parse(this.buf.slice(0, i));
        this.buf = this.buf.slice(i + 1);
        this.pending.push(...Object.entries(reply));
        this.waiters.splice(0).forEach((w) => w());
      }
    });
  }
  send(kind, msg) {
    this.sock.write(JSON.stringify({ from: this.node, msg: { [kind]: msg } }) + "\n");
  }
  async answer(kind, grant, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.pending.findIndex(([k, b]) => k === kind && b.grant === grant);
      if (i >= 0) return this.pending.splice(i, 1)[0][1];
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise((r) => {
        this.waiters.push(r);
        setTimeout(r, left);
      });
    }
  }
}

async function main() {
  const st = spec.settings;
  const clients = spec.servers.map((s) => {
    const [host, port] = s.addr.split(":");
    const c = new Redis({ host, port: Number(port) });
    c.on("error", (e) => emit("connection", { state: `${s.node}: ${e.message}` }));
    return c;
  });
  const redlock = new Redlock(clients, {
    driftFactor: st.drift_factor,
    retryCount: st.retries,
    retryDelay: st.retry_delay_ms,
    retryJitter: 0,
  });
  const res = spec.resource ? new Resource(spec.resource_addr, spec.client_node) : null;
  let grant = 0;
  for (const s of spec.sections) {
    // A section that was granted counts; a failed acquisition does not.
    if (spec.acquisitions_per_client !== null && grant >= spec.acquisitions_per_client) break;
    const key = s.key;
    await sleepNs(s.think_ns);
    emit("acquire_start", { key, mode: "exclusive" });
    let lock;
    try {
      const acquiring = redlock.acquire([spec.lock_names[key]], Math.round(st.ttl_ms));
      if (s.acquire_timeout_ns === null) {
        lock = await acquiring;
      } else {
        const timedOut = sleepNs(s.acquire_timeout_ns).then(() => null);
        lock = await Promise.race([acquiring, timedOut]);
        if (lock === null) {
          // The library has no timeout: a grant that comes later is handed straight back.
          acquiring.then((l) => l.release()).catch(() => {});
          emit("acquire_failed", { key, reason: "timeout" });
          continue;
        }
      }
    } catch (e) {
      emit("error", { message: `acquire: ${e.message}` });
      emit("acquire_failed", { key, reason: e instanceof ExecutionError ? "refused" : "unavailable" });
      continue;
    }
    grant += 1;
    // The hold is measured from the grant, as the model's hold timer is: its deadline is fixed
    // before `granted` is printed, so a SIGSTOP sim live sends on reading that line always falls
    // inside the hold instead of pushing the whole hold past the resume.
    const holdUntil = now() + BigInt(s.hold_ns);
    emit("granted", { key, mode: "exclusive", token: null, grant, nested: false });
    if (res) res.send("Read", { key, grant });
    await sleepUntil(holdUntil);
    let abandoned = false;
    if (res) {
      const read = await res.answer("ReadReply", grant, 1000);
      if (read) {
        if (st.respect_validity && Date.now() >= lock.expiration) {
          abandoned = true;
        } else {
          await sleepNs(s.check_to_write_ns);
          const value = read.value + 1;
          emit("write_sent", { key, grant, token: null, value });
          res.send("Write", { key, grant, token: null, value });
          const a = await res.answer("WriteReply", grant, 1000);
          if (a) emit("write_answered", { key, grant, fenced_accepted: a.fenced_accepted });
        }
      }
    }
    emit(abandoned ? "abandoned" : "released", abandoned ? { key } : { key, nested: false });
    try {
      await lock.release();
    } catch (e) {
      emit("error", { message: `release: ${e.message}` });
      emit("release_failed", { key, reason: e instanceof ExecutionError ? "refused" : "unavailable" });
    }
  }
  await sleepNs(Number(end - now()));
  emit("done");
  process.exit(0);
}

main().catch((e) => {
  emit("error", { message: `harness: ${e.stack}` });
  process.exit(1);
});
