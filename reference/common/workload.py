"""The workload loop of reference/PROTOCOL.md for the Python harnesses (redis-py, kazoo).

A harness gives a `Library` (acquire, check before the write, release) and calls `run(spec, lib)`;
this module reads nothing but the run specification, talks to the resource `sim live` serves,
and writes the event lines, each stamped with CLOCK_MONOTONIC nanoseconds.
"""

import json
import os
import socket
import sys
import threading
import time

_out_lock = threading.Lock()


def emit(event, **fields):
    """One event line, flushed at once (the process may be stopped or killed any time)."""
    fields["event"] = event
    fields["mono_ns"] = time.monotonic_ns()
    line = json.dumps(fields)
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def load_spec():
    with open(sys.argv[1]) as f:
        return json.load(f)


class Resource:
    """The connection to sim live's resource: JSON lines, answers in order."""

    def __init__(self, addr, node):
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = self.sock.makefile("r")
        self.node = node
        self.pending = []

    def send(self, kind, **msg):
        line = json.dumps({"from": self.node, "msg": {kind: msg}}) + "\n"
        self.sock.sendall(line.encode())

    def answer(self, kind, grant, timeout_s):
        """The answer of `kind` for `grant`, or None after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            for i, (k, body) in enumerate(self.pending):
                if k == kind and body["grant"] == grant:
                    del self.pending[i]
                    return body
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                line = self.reader.readline()
            except (socket.timeout, OSError):
                return None
            if not line:
                return None
            reply = json.loads(line)
            self.pending.extend(reply.items())


class Library:
    """What a harness provides. `lost` is set (by the library's listener) when the library says
    the lock or its session is lost or suspended and the application must stop."""

    def __init__(self):
        self.lost = threading.Event()

    def acquire(self, key, timeout_s):
        """Returns (granted, token); raises on a library error."""
        raise NotImplementedError

    def check(self, key):
        """The application's check just before the write: False abandons the section."""
        return not self.lost.is_set()

    def release(self, key):
        raise NotImplementedError

    def fail_reason(self, error):
        """The protocol's reason for a library exception."""
        return "unavailable"


def _end_at(end_mono_ns):
    def stop():
        left = end_mono_ns - time.monotonic_ns()
        if left > 0:
            time.sleep(left / 1e9)
        emit("done")
        os._exit(0)

    threading.Thread(target=stop, daemon=True).start()


def _sleep_ns(ns, end_mono_ns, interrupt=None):
    """Sleeps `ns` (never past the end); True when `interrupt` was set meanwhile."""
    return _sleep_until(time.monotonic_ns() + ns, end_mono_ns, interrupt)


def _sleep_until(until_mono_ns, end_mono_ns, interrupt=None):
    """Sleeps until `until_mono_ns` (never past the end); True when `interrupt` was set meanwhile."""
    until = min(until_mono_ns, end_mono_ns)
    left = (until - time.monotonic_ns()) / 1e9
    if interrupt is not None:
        return interrupt.wait(max(left, 0))
    if left > 0:
        time.sleep(left)
    return False


def run(spec, lib):
    end = spec["end_mono_ns"]
    _end_at(end)
    resource = Resource(spec["resource_addr"], spec["client_node"]) if spec["resource"] else None
    grant = 0
    completed = 0
    limit = spec["acquisitions_per_client"]
    for s in spec["sections"]:
        if limit is not None and completed >= limit:
            break
        key = s["key"]
        _sleep_ns(s["think_ns"], end)
        # A second past the end: the process exits at the end, so no call times out for it.
        limit_ns = end - time.monotonic_ns() + 1_000_000_000
        if s["acquire_timeout_ns"] is not None:
            limit_ns = min(limit_ns, s["acquire_timeout_ns"])
        emit("acquire_start", key=key, mode="exclusive")
        lib.lost.clear()
        try:
            granted, token = lib.acquire(key, max(limit_ns, 0) / 1e9)
        except Exception as e:  # the library's own failure, whatever its class
            emit("error", message="acquire: %s: %s" % (type(e).__name__, e))
            emit("acquire_failed", key=key, reason=lib.fail_reason(e))
            continue
        if not granted:
            emit("acquire_failed", key=key, reason="timeout")
            continue
        grant += 1
        completed += 1
        # The hold is measured from the grant, as the model's hold timer is: its deadline is fixed
        # before `granted` is printed, so a SIGSTOP sim live sends on reading that line always
        # falls inside the hold instead of pushing the whole hold past the resume.
        hold_until = time.monotonic_ns() + s["hold_ns"]
        emit("granted", key=key, mode="exclusive", token=token, grant=grant, nested=False)
        if resource:
            resource.send("Read", key=key, grant=grant)
        abandoned = _sleep_until(hold_until, end, lib.lost)
        if not abandoned and resource:
            read = resource.answer("ReadReply", grant, 1.0)
            if read is not None:
                if not lib.check(key):
                    abandoned = True
                else:
                    _sleep_ns(s["check_to_write_ns"], end)
                    value = read["value"] + 1
                    emit("write_sent", key=key, grant=grant, token=token, value=value)
                    resource.send("Write", key=key, grant=grant, token=token, value=value)
                    answer = resource.answer("WriteReply", grant, 1.0)
                    if answer is not None:
                        emit("write_answered", key=key, grant=grant, fenced_accepted=answer["fenced_accepted"])
        if abandoned:
            emit("abandoned", key=key)
        else:
            emit("released", key=key, nested=False)
        try:
            lib.release(key)
        except Exception as e:
            emit("error", message="release: %s: %s" % (type(e).__name__, e))
            emit("release_failed", key=key, reason=lib.fail_reason(e))
    # Out of sections: wait for the end like a client whose schedule is done.
    _sleep_ns(end - time.monotonic_ns(), end)
    emit("done")
    os._exit(0)
