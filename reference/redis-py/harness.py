"""Reference client: redis-py's `Lock` (the SET NX PX pattern with a random token and the
compare-and-delete release script), driven by the workload of reference/PROTOCOL.md.

redis-py's Lock issues no fencing token (its token is a random string), so `granted` carries
`null`. It has no watchdog and no connection-state listener: nothing tells the application the
lock is lost, so the check before the write always passes, as in the model's plain pattern. A
lost connection surfaces as an exception of the call in flight (acquire: `unavailable`;
release: `unavailable`, or `refused` when the release script found the key no longer ours:
`LockNotOwnedError`).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

import redis  # noqa: E402
from redis.exceptions import LockNotOwnedError  # noqa: E402

import workload  # noqa: E402


class RedisPy(workload.Library):
    def __init__(self, spec):
        super().__init__()
        host, port = spec["servers"][0]["addr"].rsplit(":", 1)
        self.client = redis.Redis(host=host, port=int(port))
        self.names = spec["lock_names"]
        self.ttl_s = spec["settings"]["ttl_ms"] / 1000.0
        self.sleep_s = spec["settings"]["retry_ms"] / 1000.0
        self.held = {}

    def acquire(self, key, timeout_s):
        lock = self.client.lock(self.names[key], timeout=self.ttl_s, sleep=self.sleep_s, thread_local=False)
        if not lock.acquire(blocking=True, blocking_timeout=timeout_s):
            return False, None
        self.held[key] = lock
        return True, None

    def release(self, key):
        lock = self.held.pop(key)
        lock.release()

    def fail_reason(self, error):
        return "refused" if isinstance(error, LockNotOwnedError) else "unavailable"


if __name__ == "__main__":
    spec = workload.load_spec()
    workload.emit("connection", state="redis-py %s" % redis.__version__)
    workload.run(spec, RedisPy(spec))
