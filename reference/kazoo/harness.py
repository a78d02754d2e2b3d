"""Reference client: kazoo's `Lock` (the sequential-ephemeral recipe Curator's InterProcessMutex
also follows), driven by the workload of reference/PROTOCOL.md.

The fencing token is the lock node's czxid, read with one `exists` after the grant (the model's
token; kazoo itself does not hand it out). kazoo tells the application its connection state
through a listener, on kazoo's own connection thread: SUSPENDED (the connection dropped, the
session may still live) and LOST (the session expired). The harness honours LOST, and SUSPENDED
too with the row's `on_connection_loss = "suspended"` (the default): the listener sets a flag, which ends a hold at once (`lost_notice`, `abandoned`) and fails the check before the write.
Whether SUSPENDED arrives before the application's check after a pause is kazoo's timing, which is
what this reference client shows.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

import threading  # noqa: E402
import time  # noqa: E402

import kazoo  # noqa: E402
from kazoo.client import KazooClient, KazooState  # noqa: E402
from kazoo.exceptions import LockTimeout, SessionExpiredError  # noqa: E402

import workload  # noqa: E402


# Opt-in timing trace for measuring the race after a pause (docs/fidelity.md, "The real
# libraries"): with LOCKSIM_KAZOO_TRACE=FILE each client appends one JSON line per stamp to FILE:
# the application thread waking from its hold's wait (`app_wake`) and reaching its check
# (`check`), kazoo's connection thread returning from a select half a second past its timeout
# (`conn_wake`: a pause), its listener getting a state (`listener`) and setting the flag the
# check reads (`flag_set`, after printing `connection` and `lost_notice`). Off by default: nothing
# here runs in an ordinary reference run.
_TRACE = os.environ.get("LOCKSIM_KAZOO_TRACE")
_trace_lock = threading.Lock()


def _stamp(what, **fields):
    if _TRACE:
        fields.update(what=what, pid=os.getpid(), mono_ns=time.monotonic_ns())
        line = workload.json.dumps(fields) + "\n"
        with _trace_lock, open(_TRACE, "a") as f:
            f.write(line)


class _WakeStampedEvent(threading.Event):
    """`Library.lost`, stamping when a wait (the hold) returns: the application thread's wake-up."""

    def wait(self, timeout=None):
        got = super().wait(timeout)
        _stamp("app_wake", set=got)
        return got


class Kazoo(workload.Library):
    def __init__(self, spec):
        super().__init__()
        hosts = ",".join(s["addr"] for s in spec["servers"])
        self.zk = KazooClient(hosts=hosts, timeout=spec["settings"]["session_timeout_ms"] / 1000.0)
        if _TRACE:
            self.lost = _WakeStampedEvent()
            select = self.zk.handler.select

            def timed_select(*args, **kwargs):
                timeout = args[3] if len(args) > 3 else kwargs.get("timeout")
                start = time.monotonic_ns()
                out = select(*args, **kwargs)
                if timeout is not None and time.monotonic_ns() - start > timeout * 1e9 + 500_000_000:
                    _stamp("conn_wake")
                return out

            self.zk.handler.select = timed_select
        self.stop_at_suspended = spec["settings"]["on_connection_loss"] == "suspended"
        self.zk.add_listener(self.on_state)
        self.zk.start(timeout=15)
        self.names = spec["lock_names"]
        self.holding = None
        self.held = {}

    def on_state(self, state):
        # Runs on kazoo's connection thread: it must not block.
        _stamp("listener", state=str(state))
        workload.emit("connection", state=str(state))
        honoured = (KazooState.SUSPENDED, KazooState.LOST) if self.stop_at_suspended else (KazooState.LOST,)
        if state in honoured and self.holding is not None:
            workload.emit("lost_notice", key=self.holding)
            self.lost.set()
            _stamp("flag_set")

    def check(self, key):
        ok = super().check(key)
        _stamp("check", passed=ok)
        return ok

    def acquire(self, key, timeout_s):
        lock = self.zk.Lock(self.names[key], identifier=str(os.getpid()))
        try:
            if not lock.acquire(blocking=True, timeout=timeout_s):
                return False, None
        except LockTimeout:
            return False, None
        self.held[key] = lock
        self.holding = key
        stat = self.zk.exists(lock.path + "/" + lock.node)
        return True, (stat.czxid if stat is not None else None)

    def release(self, key):
        self.holding = None
        lock = self.held.pop(key)
        lock.release()

    def fail_reason(self, error):
        return "session_lost" if isinstance(error, SessionExpiredError) else "unavailable"


if __name__ == "__main__":
    spec = workload.load_spec()
    workload.emit("connection", state="kazoo %s" % kazoo.version.__version__)
    workload.run(spec, Kazoo(spec))
