// Reference client: etcd clientv3 3.4.23's concurrency.Session and Mutex (Debian
// golang-etcd-server-dev), driven by the workload of reference/PROTOCOL.md.
//
// One Session per client (lease TTL from the row, kept alive by clientv3 every TTL/3); a new one
// after Session.Done() closes. The token is the own key's create revision, read with one Get after
// the grant (Mutex keeps it unexported). When the session ends while the lock is held, the harness
// stops at once with the row's on_session_lost = "stop" (the default, as concurrency's docs
// advise): lost_notice, abandoned; with "proceed" it ignores the session.
// Every call runs under the context the application gives it: the acquire timeout, else the run's
// end (clientv3 has no per-call timeout of its own).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/clientv3/concurrency"
	"golang.org/x/sys/unix"
)

type section struct {
	ThinkNs          int64  `json:"think_ns"`
	Key              int    `json:"key"`
	AcquireTimeoutNs *int64 `json:"acquire_timeout_ns"`
	HoldNs           int64  `json:"hold_ns"`
	CheckToWriteNs   int64  `json:"check_to_write_ns"`
}

type spec struct {
	ClientNode   int                     `json:"client_node"`
	Servers      []struct{ Addr string } `json:"servers"`
	LockNames    []string                `json:"lock_names"`
	ResourceAddr string                  `json:"resource_addr"`
	Resource     bool                    `json:"resource"`
	EndMonoNs    int64                   `json:"end_mono_ns"`
	Limit        *int                    `json:"acquisitions_per_client"`
	Settings     struct {
		LeaseTTLMs    float64 `json:"lease_ttl_ms"`
		OnSessionLost string  `json:"on_session_lost"`
	} `json:"settings"`
	Sections []section `json:"sections"`
}

// obj is one JSON object, an event's or a resource message's.
type obj = map[string]interface{}

var outMu sync.Mutex

func monoNs() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func emit(event string, fields obj) {
	if fields == nil {
		fields = obj{}
	}
	fields["event"] = event
	fields["mono_ns"] = monoNs()
	line, _ := json.Marshal(fields)
	outMu.Lock()
	os.Stdout.Write(append(line, '\n'))
	outMu.Unlock()
}

// resource is the connection to sim live's resource; answers come in order on one reader.
type resource struct {
	conn    net.Conn
	node    int
	replies chan map[string]obj
}

func dialResource(addr string, node int) *resource {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientv3 harness: resource:", err)
		os.Exit(1)
	}
	r := &resource{conn: conn, node: node, replies: make(chan map[string]obj, 16)}
	go func() {
		sc := bufio.NewScanner(conn)
		for sc.Scan() {
			var m map[string]obj
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				r.replies <- m
			}
		}
	}()
	return r
}

func (r *resource) send(kind string, msg obj) {
	line, _ := json.Marshal(obj{"from": r.node, "msg": obj{kind: msg}})
	r.conn.Write(append(line, '\n'))
}

func (r *resource) answer(kind string, grant int, limit time.Duration) obj {
	timer := time.After(limit)
	for {
		select {
		case m := <-r.replies:
			if body, ok := m[kind]; ok && int(body["grant"].(float64)) == grant {
				return body
			}
		case <-timer:
			return nil
		}
	}
}

func sleepUntil(at int64, interrupt <-chan struct{}) bool {
	d := time.Duration(at - monoNs())
	if d <= 0 {
		return false
	}
	select {
	case <-time.After(d):
		return false
	case <-interrupt:
		return true
	}
}

func main() {
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientv3 harness:", err)
		os.Exit(1)
	}
	var s spec
	if err := json.Unmarshal(raw, &s); err != nil {
		fmt.Fprintln(os.Stderr, "clientv3 harness: bad specification:", err)
		os.Exit(1)
	}
	end := s.EndMonoNs
	go func() { sleepUntil(end, nil); emit("done", nil); os.Exit(0) }()
	var eps []string
	for _, sv := range s.Servers {
		eps = append(eps, sv.Addr)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second})
	if err != nil {
		emit("error", obj{"message": "clientv3.New: " + err.Error()})
		sleepUntil(end, nil)
		return
	}
	var res *resource
	if s.Resource {
		res = dialResource(s.ResourceAddr, s.ClientNode)
	}
	// A second past the end: the process exits at the end, so a call never fails for the end.
	endCtx, cancel := context.WithTimeout(context.Background(), time.Duration(end-monoNs())+time.Second)
	defer cancel()
	ttl := int(s.Settings.LeaseTTLMs / 1000)
	var sess *concurrency.Session
	grant := 0
	for _, sec := range s.Sections {
		if s.Limit != nil && grant >= *s.Limit {
			break
		}
		key := sec.Key
		sleepUntil(monoNs()+sec.ThinkNs, nil)
		if sess != nil {
			select {
			case <-sess.Done():
				emit("connection", obj{"state": "session done"})
				sess = nil
			default:
			}
		}
		emit("acquire_start", obj{"key": key, "mode": "exclusive"})
		if sess == nil {
			if sess, err = concurrency.NewSession(cli, concurrency.WithTTL(ttl), concurrency.WithContext(endCtx)); err != nil {
				sess = nil
				emit("error", obj{"message": "NewSession: " + err.Error()})
				emit("acquire_failed", obj{"key": key, "reason": "unavailable"})
				continue
			}
		}
		m := concurrency.NewMutex(sess, s.LockNames[key])
		ctx, stop := endCtx, func() {}
		if sec.AcquireTimeoutNs != nil {
			ctx, stop = context.WithTimeout(endCtx, time.Duration(*sec.AcquireTimeoutNs))
		}
		err = m.Lock(ctx)
		stop()
		if err == context.DeadlineExceeded || (err != nil && strings.Contains(err.Error(), "context deadline exceeded")) {
			emit("acquire_failed", obj{"key": key, "reason": "timeout"})
			continue
		} else if err != nil {
			emit("error", obj{"message": "Lock: " + err.Error()})
			emit("acquire_failed", obj{"key": key, "reason": "unavailable"})
			continue
		}
		var token interface{}
		if got, gerr := cli.Get(endCtx, m.Key()); gerr == nil && len(got.Kvs) == 1 {
			token = got.Kvs[0].CreateRevision
		}
		grant++
		// The hold is measured from the grant, as the model's hold timer is: its deadline is fixed
		// before `granted` is printed, so a SIGSTOP sim live sends on reading that line always
		// falls inside the hold instead of pushing the whole hold past the resume.
		holdUntil := monoNs() + sec.HoldNs
		emit("granted", obj{"key": key, "mode": "exclusive", "token": token, "grant": grant, "nested": false})
		if res != nil {
			res.send("Read", obj{"key": key, "grant": grant})
		}
		lost := make(chan struct{})
		held := make(chan struct{})
		// With on_session_lost = "proceed" the application ignores the session: nothing ends it.
		sessDone := sess.Done()
		if s.Settings.OnSessionLost != "stop" {
			sessDone = nil
		}
		go func(done <-chan struct{}) {
			select {
			case <-done:
				emit("lost_notice", obj{"key": key})
				close(lost)
			case <-held:
			}
		}(sessDone)
		abandoned := sleepUntil(holdUntil, lost)
		if !abandoned && res != nil {
			if read := res.answer("ReadReply", grant, time.Second); read != nil {
				// The application's check: has the session ended? (Done() itself, as programs
				// select on it; whether it has closed yet after a pause is clientv3's timing.)
				select {
				case <-sessDone:
					abandoned = true
				case <-lost:
					abandoned = true
				default:
					sleepUntil(monoNs()+sec.CheckToWriteNs, nil)
					value := int64(read["value"].(float64)) + 1
					emit("write_sent", obj{"key": key, "grant": grant, "token": token, "value": value})
					res.send("Write", obj{"key": key, "grant": grant, "token": token, "value": value})
					if a := res.answer("WriteReply", grant, time.Second); a != nil {
						emit("write_answered", obj{"key": key, "grant": grant, "fenced_accepted": a["fenced_accepted"]})
					}
				}
			}
		}
		close(held)
		if abandoned {
			emit("abandoned", obj{"key": key})
		} else {
			emit("released", obj{"key": key, "nested": false})
		}
		if err := m.Unlock(endCtx); err != nil {
			emit("error", obj{"message": "Unlock: " + err.Error()})
			emit("release_failed", obj{"key": key, "reason": "unavailable"})
		}
	}
	sleepUntil(end, nil)
	emit("done", nil)
	os.Exit(0)
}
