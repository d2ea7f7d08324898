package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// freeAddr is a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// metric reads one unlabelled sample from a mount's /metrics.
func metric(t *testing.T, addr, name string) float64 {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s:\n%s", name, grepLines(string(b), "memfs_"))
	return 0
}

// tempWriter writes temporary files through dir the way the SDK memory
// tools do, each removed before the grace ends, until stop is closed; it
// reports how many it wrote and the errors it met.
func tempWriter(dir, tag string, stop <-chan struct{}) <-chan string {
	out := make(chan string, 1)
	go func() {
		n, failed := 0, 0
		var first error
		for {
			select {
			case <-stop:
				out <- fmt.Sprintf("%d temporary files, %d failed (first: %v)", n, failed, first)
				return
			default:
			}
			n++
			f := filepath.Join(dir, fmt.Sprintf(".tmp-%s-%d-0f8fad5b", tag, n))
			err := os.WriteFile(f, []byte(fmt.Sprintf("from %s %d\n", tag, n)), 0o644)
			time.Sleep(100 * time.Millisecond)
			if err == nil {
				err = os.Remove(f)
			}
			if err != nil {
				failed++
				if first == nil {
					first = err
				}
			}
		}
	}()
	return out
}

// tempVersions are the versions at temporary paths holding tag's writes.
func tempVersions(all []versions.Version, tag string) []versions.Version {
	var out []versions.Version
	for _, v := range all {
		if v.Path != nil && strings.Contains(*v.Path, ".tmp-"+tag+"-") {
			out = append(out, v)
		}
	}
	return out
}

// Load does not break other sessions: an agent in memfs run spins 400
// busy loops, with no --cpus, for MEMFS_LOAD_SECONDS (default 60) from
// the moment all 400 run, while another session's mount keeps writing
// temporary files. That mount's lease never lapses (its metrics count no
// lapse) and none of its temporary files becomes a version. The longest
// gap between its lease's renewals is logged: docs/reliability.md sets
// the lease from it.
func TestE2ELoadKeepsOtherSessionsLeases(t *testing.T) {
	seconds := 60
	if n, err := strconv.Atoi(os.Getenv("MEMFS_LOAD_SECONDS")); err == nil && n > 0 {
		seconds = n
	}
	env := newE2EEnv(t)
	other, slug := env.createStore(t, "Other session")
	busy, _ := env.createStore(t, "Busy agent")
	mnt, addr := mountDir(t), freeAddr(t)
	d := env.startMount(t, mnt, "--store", other, "--metrics-addr", addr)

	// The loops run until memfs run is signalled: its command gets the
	// signal, and the sandbox ends with it. Each is forked waiting for a
	// line on a pipe, and all are let go at once, so that the shell forking
	// them is not slowed by those it forked already (the agent's CPU weight
	// is low): "started" is the moment all 400 spin.
	script := `set -e; f=$(mktemp -u); mkfifo "$f"; exec 3<>"$f"; rm "$f"
for i in $(seq 400); do (read x; while :; do :; done) <&3 & done
for i in $(seq 400); do echo; done >&3; echo started; wait`
	agent := exec.Command(memfsBin, "run", "--store", busy, "--", "sh", "-c", script)
	agent.Env = env.environ()
	out, err := agent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var agentErr syncBuffer
	agent.Stderr = &agentErr
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "started" {
				close(started)
			}
		}
		exited <- agent.Wait()
	}()
	t.Cleanup(func() {
		agent.Process.Kill()
	})
	stop := make(chan struct{})
	written := tempWriter(filepath.Join(mnt, slug), "other", stop)
	// The load counts from the moment all 400 loops run.
	peak := 0
	check := func() {
		select {
		case err := <-exited:
			t.Fatalf("the busy agent exited: %v\n%s", err, agentErr.String())
		default:
		}
		peak = max(peak, agentTasks())
	}
	launch := time.Now()
	for running := false; !running; {
		select {
		case <-started:
			running = true
		case <-time.After(time.Second):
			check()
			if time.Since(launch) > 2*time.Minute {
				t.Fatalf("the agent started %d of its 400 loops in %v", peak, time.Since(launch).Round(time.Second))
			}
		}
	}
	begin := time.Now()
	t.Logf("the agent started its 400 loops in %v", begin.Sub(launch).Round(100*time.Millisecond))
	for deadline := begin.Add(time.Duration(seconds) * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		check()
	}
	t.Logf("at most %d processes ran in the agent's cgroup", peak)
	if peak < 400 {
		t.Errorf("at most %d processes ran in the agent's cgroup, want its 400 loops", peak)
	}
	agent.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Errorf("memfs run did not end a minute after SIGTERM\n%s", agentErr.String())
	}
	close(stop)
	took := time.Since(begin)
	w := <-written
	lapses := metric(t, addr, "memfs_mount_lease_lapses_total")
	gap := metric(t, addr, "memfs_mount_lease_renewal_gap_max_seconds")
	t.Logf("busy agent ran %v; the other session's mount: %s; lease lapses %v; longest gap between renewals %.3fs (lease %v)",
		took.Round(time.Second), w, lapses, gap, versions.LeaseTTL)
	if lapses != 0 || strings.Contains(d.stderr.String(), "lease had lapsed") {
		t.Errorf("the other session's mount lost its lease %v times under the agent's load", lapses)
	}
	d.stop(t, syscall.SIGTERM)
	if temps := tempVersions(env.versionList(t, other), "other"); len(temps) != 0 {
		t.Errorf("%d temporary files of the other session became versions:%s", len(temps), describeVersions(temps))
	}
}

// A stopped mount touches nothing it does not own. Mount A holds three
// temporary files and is stopped (SIGSTOP) past its lease; meanwhile
// mount B of another session writes and removes temporary files of its
// own, and recovery publishes A's. Resumed, A serves a rename and a remove
// of its files that were queued while it was stopped: it publishes and
// drops none of them (nor any of B's), logs that its lease lapsed, takes a
// new one and goes on working.
func TestE2EStoppedMountTouchesNothingItDoesNotOwn(t *testing.T) {
	env := newE2EEnv(t)
	store, slug := env.createStore(t, "Stopped mount")
	env.cli(t, "memory", "create", store, "--path", "/target.md", "--content", "v1")
	mntA, mntB := mountDir(t), mountDir(t)
	a := env.startMount(t, mntA, "--store", store)
	b := env.startMount(t, mntB, "--store", store)
	dirA, dirB := filepath.Join(mntA, slug), filepath.Join(mntB, slug)

	stopB := make(chan struct{})
	written := tempWriter(dirB, "b", stopB)
	held := []string{".tmp-a-1", ".tmp-a-2", ".tmp-a-3"}
	for _, name := range held {
		if err := os.WriteFile(filepath.Join(dirA, name), []byte("from A "+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Within the grace: A still holds all three pending.
	awaitDurable(t, env, store, "/.tmp-a-1", "/.tmp-a-2", "/.tmp-a-3")
	env.stopIdle(t, a.cmd.Process)
	stopped := time.Now()
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			a.cmd.Process.Signal(syscall.SIGCONT)
		}
	})
	// Requests that wait for A: served once it resumes.
	renamed, removed := make(chan error, 1), make(chan error, 1)
	go func() { renamed <- os.Rename(filepath.Join(dirA, ".tmp-a-2"), filepath.Join(dirA, "target.md")) }()
	go func() { removed <- os.Remove(filepath.Join(dirA, ".tmp-a-3")) }()

	// Past A's lease, and a sweep of B's handle.
	time.Sleep(time.Until(stopped.Add(versions.LeaseTTL + 2*time.Second)))
	recovered := env.memoryList(t, store)
	// B's pending file while A resumes: A must neither publish nor drop it.
	if err := os.WriteFile(filepath.Join(dirB, ".tmp-kept-by-b"), []byte("from B, kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.cmd.Process.Signal(syscall.SIGCONT)
	resumed = true
	for name, ch := range map[string]chan error{"rename": renamed, "remove": removed} {
		select {
		case err := <-ch:
			t.Logf("the %s queued while A was stopped: %v", name, err)
		case <-time.After(e2eCmdTimeout):
			t.Fatalf("the %s queued while A was stopped did not return after A resumed", name)
		}
	}
	// A works on: a new save, and a new temporary file published.
	if err := os.WriteFile(filepath.Join(dirA, "after.md"), []byte("after the lapse"), 0o644); err != nil {
		t.Errorf("a save through A after it resumed: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dirA, ".tmp-a-4"), []byte("from A .tmp-a-4"), 0o644); err != nil {
		t.Errorf("a temporary file through A after it resumed: %v", err)
	}
	time.Sleep(2 * time.Second) // B writes on while A resumes
	close(stopB)
	t.Logf("B: %s", <-written)
	// B publishes its kept file when its grace ends.
	if took, ok := waitFor(func() bool { _, ok := env.memoryList(t, store)["/.tmp-kept-by-b"]; return ok }, time.Now(), 10*time.Second); !ok {
		t.Errorf("B's pending file saved before A resumed was not published in %v", took.Round(time.Second))
	}

	for _, name := range held {
		if m, ok := recovered["/"+name]; !ok || m.ContentSize != len("from A "+name) {
			t.Errorf("A's %s after its lease lapsed: %+v (found %v), want it published by recovery", name, m, ok)
		}
	}
	all := env.versionList(t, store)
	if temps := tempVersions(all, "b"); len(temps) != 0 {
		t.Errorf("%d of B's temporary files became versions:%s", len(temps), describeVersions(temps))
	}
	byPath := map[string][]versions.Version{}
	for _, v := range all {
		if v.Path != nil {
			byPath[*v.Path] = append(byPath[*v.Path], v)
		}
	}
	if vs := byPath["/.tmp-kept-by-b"]; len(vs) != 1 || vs[0].Operation != versions.OpCreated || vs[0].CreatedBy == nil || vs[0].CreatedBy.ID != b.session(t) {
		t.Errorf("B's pending file saved before A resumed has versions:%s\nwant one, created in B's session's name", describeVersions(vs))
	}
	// Recovery published each of A's files once, in A's session's name.
	// Memories from then on, A's queued requests acted on them as on any
	// memory: the rename moved .tmp-a-2's content over /target.md and the
	// remove deleted .tmp-a-3.
	for _, name := range held {
		vs := byPath["/"+name]
		if len(vs) == 0 || vs[len(vs)-1].Operation != versions.OpCreated || vs[len(vs)-1].CreatedBy == nil || vs[len(vs)-1].CreatedBy.ID != a.session(t) {
			t.Errorf("/%s has versions:%s\nwant it created first by recovery, in A's session's name", name, describeVersions(vs))
		}
		for _, v := range vs[:max(0, len(vs)-1)] {
			if v.Operation != versions.OpDeleted {
				t.Errorf("/%s has a version after recovery's other than A's own removal:%s", name, describeVersions(vs))
			}
		}
	}
	if got := env.cli(t, "memory", "get", store, "/target.md"); got != "v1" && got != "from A .tmp-a-2" {
		t.Errorf("/target.md holds %q: want v1, or A's .tmp-a-2 moved over it", got)
	}
	if vs := byPath["/target.md"]; len(vs) > 2 {
		t.Errorf("/target.md has versions:%s", describeVersions(vs))
	}
	for _, want := range []string{"/after.md", "/.tmp-a-4"} {
		if vs := byPath[want]; len(vs) != 1 {
			t.Errorf("%s saved through A after it resumed has versions:%s\nwant one", want, describeVersions(vs))
		}
	}
	if !strings.Contains(a.stderr.String(), "lease had lapsed") {
		t.Errorf("A's log does not say its lease lapsed:\n%s", a.stderr.String())
	}
}

// Recovery does not starve: with 300 pending files in store A that cannot
// be published (A is over its history quota), a temporary file saved
// through a mount of store B before a kill -9 is published within the
// lease plus a second. memfs pending shows A's files as unpublishable and
// settles them by hand.
func TestE2ERecoveryDoesNotStarve(t *testing.T) {
	env := newE2EEnv(t)
	full, _ := env.createStore(t, "Over quota")
	other, slug := env.createStore(t, "Other store")
	// A mount of A that died holding 300 temporary files.
	db, err := versions.Open(env.dbPath, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dead := versions.MountLease{ID: versions.NewMountID(), SessionID: "sesn_dead", Host: "gone", Mountpoint: "/mnt/memory"}
	ctx := context.Background()
	if err := db.StartMount(ctx, dead); err != nil {
		t.Fatal(err)
	}
	renew := func() {
		if lapsed, err := db.RenewMount(ctx, &dead); err != nil || lapsed {
			t.Fatalf("renewing the lease of the mount about to die: lapsed %v, %v", lapsed, err)
		}
	}
	for i := range 300 {
		if i%50 == 0 {
			renew()
		}
		if _, err := db.SavePending(ctx, full, dead.Owner(), fmt.Sprintf("/.tmp-dead-%03d", i), strings.Repeat("x", 100), versions.SessionActor("sesn_dead"), 0); err != nil {
			t.Fatal(err)
		}
	}
	// Its lease lapses LeaseTTL from now: over the quota by then.
	renew()
	db.Close()
	// The CLI without waiting for pending files to go (env.cli does): these
	// stay.
	cli := func(want int, args ...string) (string, string) {
		t.Helper()
		c := exec.Command(memfsBin, args...)
		c.Env = env.environ()
		var out, errOut strings.Builder
		c.Stdout, c.Stderr = &out, &errOut
		err := c.Run()
		if code := c.ProcessState.ExitCode(); code != want {
			t.Fatalf("memfs %s: exit %d (%v), want %d; stderr: %s", strings.Join(args, " "), code, err, want, errOut.String())
		}
		return out.String(), errOut.String()
	}
	cli(0, "store", "update", full, "--max-history-bytes", "1000")

	idle := mountDir(t)
	i := env.startMount(t, idle, "--store", full)
	mnt := mountDir(t)
	d := env.startMount(t, mnt, "--store", other)
	if err := os.WriteFile(filepath.Join(mnt, slug, ".tmp-1-saved"), []byte("saved before the kill"), 0o644); err != nil {
		t.Fatal(err)
	}
	awaitDurable(t, env, other, "/.tmp-1-saved")
	d.kill9(t)
	detachDead(t, mnt)
	cpu0 := cpuTime(t, i.cmd.Process.Pid)
	got, after := awaitCLI(t, env, versions.LeaseTTL+time.Second, "memory", "get", other, "/.tmp-1-saved")
	if got != "saved before the kill" || after > versions.LeaseTTL+time.Second {
		t.Errorf("B's temporary file %v after the kill: %q, want it published within %v", after, got, versions.LeaseTTL+time.Second)
	}
	time.Sleep(2 * time.Second)
	t.Logf("B's temporary file published %v after the kill; an idle mount of A used %v of CPU in the %v after the kill", after.Round(10*time.Millisecond),
		cpuTime(t, i.cmd.Process.Pid)-cpu0, (after + 2*time.Second).Round(100*time.Millisecond))

	var list struct {
		Data []versions.PendingFile `json:"data"`
	}
	out, _ := cli(0, "--format", "json", "pending", "list", full)
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("memfs pending list --format json: %v\n%s", err, out)
	}
	if len(list.Data) != 300 {
		t.Fatalf("memfs pending list: %d files, want 300", len(list.Data))
	}
	for _, f := range list.Data {
		if f.State != versions.PendingUnpublishable || !strings.Contains(f.Failure, "quota") || f.Size != 100 {
			t.Fatalf("pending file %+v: want unpublishable over the quota, 100 bytes", f)
		}
	}
	if out, _ := cli(0, "pending", "list", full); !strings.Contains(out, "unpublishable") || !strings.Contains(out, "/.tmp-dead-000") {
		t.Errorf("memfs pending list:\n%s", out)
	}
	if _, errOut := cli(5, "pending", "publish", full, strconv.FormatInt(list.Data[0].ID, 10)); !strings.Contains(errOut, "quota") {
		t.Errorf("memfs pending publish over the quota: %s; want why", errOut)
	}
	cli(2, "pending", "drop", full)
	if _, errOut := cli(2, "pending", "drop", full, "--all"); !strings.Contains(errOut, "--yes") {
		t.Errorf("memfs pending drop --all without a terminal or --yes: %s; want a refusal naming --yes", errOut)
	}
	var dropped struct {
		Data []struct {
			ID     int64  `json:"id"`
			Action string `json:"action"`
		} `json:"data"`
	}
	out, _ = cli(0, "--format", "json", "pending", "drop", full, "--all", "--yes")
	if err := json.Unmarshal([]byte(out), &dropped); err != nil || len(dropped.Data) != 300 || dropped.Data[0].Action != "dropped" {
		t.Errorf("memfs pending drop --all: %v\n%s", err, out)
	}
	if out, _ := cli(0, "--format", "json", "pending", "list", full); strings.TrimSpace(out) != `{"data":[],"next_page":null}` {
		t.Errorf("memfs pending list after the drop: %s", out)
	}
	if vs := env.versionList(t, full); len(vs) != 0 {
		t.Errorf("the dropped files left versions:%s", describeVersions(vs))
	}
}

// cpuTime is the CPU time process pid used so far.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// session is the id of the session the daemon mounted, from its log.
func (d *daemon) session(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`session=(sesn_[0-9A-Za-z]+)`).FindStringSubmatch(d.stderr.String())
	if m == nil {
		t.Fatalf("the daemon's log names no session:\n%s", d.stderr.String())
	}
	return m[1]
}

// agentTasks counts the processes in memfs run cgroups (the agent's).
func agentTasks() int {
	n := 0
	for _, pattern := range []string{"/sys/fs/cgroup/pids/memfs-run-*/cgroup.procs", "/sys/fs/cgroup/memfs-run-*/cgroup.procs"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			b, _ := os.ReadFile(f)
			n += strings.Count(string(b), "\n")
		}
	}
	return n
}
