// Reference client: Apache Curator 5.4.0's InterProcessMutex (Debian libcurator-recipes-java),
// driven by the workload of reference/PROTOCOL.md.
//
// One CuratorFramework per client: the row's session timeout, Curator's default connection timeout
// (15 s) and ExponentialBackoffRetry(retry_base_sleep_ms, retry_max_retries) as the model. A
// ConnectionStateListener sees SUSPENDED (the connection dropped) and LOST (the session expired or
// Curator gave up on it); the application honours LOST, and SUSPENDED too with the row's
// on_connection_loss = "suspended" (the default, Curator's advice), while it holds: the listener opens a latch that ends the
// hold at once (lost_notice, abandoned) and fails the check before the write. That the listener
// runs on Curator's own thread, after the EventThread, is the library's timing, which this shows.
// The token is the lock node's czxid (one exists after the grant; Curator does not hand it out).

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.*;
import java.net.Socket;
import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

public class Harness {
    static final ObjectMapper JSON = new ObjectMapper();
    static final PrintStream OUT = new PrintStream(new FileOutputStream(FileDescriptor.out), true);

    /** One event line (System.nanoTime is CLOCK_MONOTONIC on Linux). */
    static synchronized void emit(String event, Object... kv) {
        ObjectNode o = JSON.createObjectNode();
        o.put("event", event);
        o.put("mono_ns", System.nanoTime());
        for (int i = 0; i < kv.length; i += 2) o.putPOJO((String) kv[i], kv[i + 1]);
        OUT.println(o.toString());
    }

    static class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework c, String path) { super(c, path); }
        String path() { return getLockPath(); }
    }

    /** The connection to sim live's resource: JSON lines, answers in order. */
    static class Resource {
        final Socket sock; final PrintWriter out; final BufferedReader in; final int node;
        final List<JsonNode> pending = new ArrayList<>();
        Resource(String addr, int node) throws IOException {
            String[] hp = addr.split(":");
            sock = new Socket(hp[0], Integer.parseInt(hp[1]));
            sock.setTcpNoDelay(true);
            out = new PrintWriter(sock.getOutputStream(), true);
            in = new BufferedReader(new InputStreamReader(sock.getInputStream()));
            this.node = node;
        }
        void send(String kind, ObjectNode msg) {
            ObjectNode o = JSON.createObjectNode();
            o.put("from", node);
            o.set("msg", JSON.createObjectNode().set(kind, msg));
            out.println(o.toString());
        }
        JsonNode answer(String kind, long grant, long timeoutMs) {
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (true) {
                for (Iterator<JsonNode> it = pending.iterator(); it.hasNext(); ) {
                    JsonNode r = it.next();
                    if (r.has(kind) && r.get(kind).get("grant").asLong() == grant) { it.remove(); return r.get(kind); }
                }
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) return null;
                try {
                    sock.setSoTimeout((int) left);
                    String line = in.readLine();
                    if (line == null) return null;
                    pending.add(JSON.readTree(line));
                } catch (IOException e) { return null; }
            }
        }
    }

    static volatile int holding = -1;
    static volatile CountDownLatch lost = new CountDownLatch(1);

    static void sleepNs(long ns, long end) throws InterruptedException {
        long until = Math.min(System.nanoTime() + ns, end);
        long left = until - System.nanoTime();
        if (left > 0) TimeUnit.NANOSECONDS.sleep(left);
    }

    public static void main(String[] args) throws Exception {
        JsonNode spec = JSON.readTree(new File(args[0]));
        final long end = spec.get("end_mono_ns").asLong();
        Thread stopper = new Thread(() -> {
            try { sleepNs(end - System.nanoTime(), end); } catch (InterruptedException e) { }
            emit("done");
            Runtime.getRuntime().halt(0);
        });
        stopper.setDaemon(true);
        stopper.start();
        StringJoiner hosts = new StringJoiner(",");
        for (JsonNode s : spec.get("servers")) hosts.add(s.get("addr").asText());
        JsonNode st = spec.get("settings");
        final boolean stopAtSuspended = st.get("on_connection_loss").asText().equals("suspended");
        CuratorFramework client = CuratorFrameworkFactory.builder()
            .connectString(hosts.toString())
            .sessionTimeoutMs(st.get("session_timeout_ms").asInt())
            .retryPolicy(new ExponentialBackoffRetry(st.get("retry_base_sleep_ms").asInt(), st.get("retry_max_retries").asInt()))
            .build();
        client.getConnectionStateListenable().addListener((c, state) -> {
            emit("connection", "state", state.toString());
            int key = holding;
            boolean honoured = state == ConnectionState.LOST || (state == ConnectionState.SUSPENDED && stopAtSuspended);
            if (honoured && key >= 0) {
                emit("lost_notice", "key", key);
                lost.countDown();
            }
        });
        client.start();
        client.blockUntilConnected(15, TimeUnit.SECONDS);
        Resource res = spec.get("resource").asBoolean()
            ? new Resource(spec.get("resource_addr").asText(), spec.get("client_node").asInt()) : null;
        Map<Integer, Mutex> mutexes = new HashMap<>();
        long grant = 0;
        JsonNode limit0 = spec.get("acquisitions_per_client");
        for (JsonNode s : spec.get("sections")) {
            if (!limit0.isNull() && grant >= limit0.asLong()) break;
            int key = s.get("key").asInt();
            sleepNs(s.get("think_ns").asLong(), end);
            // A second past the end: the process halts at the end, so no call times out for it.
            long limit = end - System.nanoTime() + 1_000_000_000L;
            if (!s.get("acquire_timeout_ns").isNull()) limit = Math.min(limit, s.get("acquire_timeout_ns").asLong());
            emit("acquire_start", "key", key, "mode", "exclusive");
            Mutex m = mutexes.computeIfAbsent(key, k -> new Mutex(client, spec.get("lock_names").get(k).asText()));
            lost = new CountDownLatch(1);
            try {
                if (!m.acquire(Math.max(limit, 0), TimeUnit.NANOSECONDS)) {
                    emit("acquire_failed", "key", key, "reason", "timeout");
                    continue;
                }
            } catch (Exception e) {
                emit("error", "message", "acquire: " + e);
                emit("acquire_failed", "key", key, "reason", "unavailable");
                continue;
            }
            holding = key;
            Long token = null;
            try {
                Stat stat = client.checkExists().forPath(m.path());
                if (stat != null) token = stat.getCzxid();
            } catch (Exception e) { emit("error", "message", "exists: " + e); }
            grant++;
            // The hold is measured from the grant, as the model's workload measures it (its hold timer
            // is set when the grant is recorded): the deadline is fixed before `granted` is printed,
            // so a SIGSTOP that sim live sends on reading that line always falls inside the hold.
            final long holdUntil = System.nanoTime() + Math.min(s.get("hold_ns").asLong(), Math.max(end - System.nanoTime(), 0));
            emit("granted", "key", key, "mode", "exclusive", "token", token, "grant", grant, "nested", false);
            if (res != null) res.send("Read", JSON.createObjectNode().put("key", key).put("grant", grant));
            boolean abandoned = lost.await(Math.max(holdUntil - System.nanoTime(), 0), TimeUnit.NANOSECONDS);
            if (!abandoned && res != null) {
                JsonNode read = res.answer("ReadReply", grant, 1000);
                if (read != null) {
                    if (lost.getCount() == 0) {
                        abandoned = true;
                    } else {
                        sleepNs(s.get("check_to_write_ns").asLong(), end);
                        long value = read.get("value").asLong() + 1;
                        emit("write_sent", "key", key, "grant", grant, "token", token, "value", value);
                        ObjectNode w = JSON.createObjectNode().put("key", key).put("grant", grant).put("value", value);
                        w.putPOJO("token", token);
                        res.send("Write", w);
                        JsonNode a = res.answer("WriteReply", grant, 1000);
                        if (a != null) emit("write_answered", "key", key, "grant", grant, "fenced_accepted", a.get("fenced_accepted").asBoolean());
                    }
                }
            }
            holding = -1;
            if (abandoned) emit("abandoned", "key", key); else emit("released", "key", key, "nested", false);
            try {
                m.release();
            } catch (Exception e) {
                emit("error", "message", "release: " + e);
                emit("release_failed", "key", key, "reason", "unavailable");
            }
        }
        sleepNs(end - System.nanoTime(), end);
        emit("done");
        Runtime.getRuntime().halt(0);
    }
}
