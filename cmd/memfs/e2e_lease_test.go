package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions/pgtest"
)

// Two mount namespaces (two containers, or two hosts) mount one store at
// one path. One holds temporary files briefly, as the SDK memory tools do;
// the other restarts its mount again and again, killed or stopped. A mount
// never publishes, drops or shows another live mount's pending files, so
// no temporary file enters the history.
func TestE2ETwoNamespacesOnePath(t *testing.T) {
	twoNamespacesOnePath(t, newE2EEnv(t))
}

func TestPostgresTwoNamespacesOnePath(t *testing.T) {
	if pgtest.Server() == "" {
		t.Skip("MEMFS_TEST_POSTGRES names no server")
	}
	twoNamespacesOnePath(t, pgEnv(t, pgtest.Database(t)))
}

func twoNamespacesOnePath(t *testing.T, env *e2eEnv) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for unshare -m")
	}
	if err := exec.Command("unshare", "-m", "--propagation", "private", "true").Run(); err != nil {
		t.Skipf("unshare -m: %v", err)
	}
	storeID, slug := env.createStore(t, "Shared path")
	env.cli(t, "memory", "create", "--path", "/notes.md", "--content", "kept", storeID)
	mnt := mountDir(t) // the same path in both namespaces
	// ready waits for the store's directory in the namespace's mount.
	// A mount that exits before it is ready fails the script, with its log.
	ready := `until [ -d "$MNT/$SLUG" ]; do kill -0 $pid 2>/dev/null || { echo "memfs mount exited before it was ready:"; cat "$LOG"; exit 1; }; sleep 0.05; done`
	writer := `"$MEMFS" mount --store "$STORE" "$MNT" 2>"$LOG" & pid=$!
` + ready + `
end=$(($(date +%s) + 8)); i=0
while [ "$(date +%s)" -lt "$end" ]; do
	i=$((i+1)); f="$MNT/$SLUG/.tmp-$$-$i-0f8fad5b-d9cb-469f-a165-70867728950e"
	printf 'half-written %d\n' "$i" > "$f"
	sleep 0.15
	rm "$f"
done
kill -TERM $pid; wait $pid
echo "temporary files: $i"`
	restarter := `end=$(($(date +%s) + 8)); i=0
while [ "$(date +%s)" -lt "$end" ]; do
	i=$((i+1))
	"$MEMFS" mount --store "$STORE" "$MNT" 2>>"$LOG" & pid=$!
	` + ready + `
	cat "$MNT/$SLUG/notes.md" >/dev/null
	if [ $((i % 2)) = 0 ]; then kill -KILL $pid; else kill -TERM $pid; fi
	wait $pid
done
umount -l "$MNT" 2>/dev/null
echo "mounts: $i"`
	logs := t.TempDir()
	run := func(name, script string) (*exec.Cmd, *strings.Builder) {
		c := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script)
		c.Env = append(env.environ(), "MEMFS="+memfsBin, "STORE="+storeID, "MNT="+mnt, "SLUG="+slug,
			"LOG="+filepath.Join(logs, name+".log"))
		var out strings.Builder
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		return c, &out
	}
	w, wout := run("writer", writer)
	time.Sleep(500 * time.Millisecond)
	r, rout := run("restarter", restarter)
	done := make(chan error, 2)
	go func() { done <- w.Wait() }()
	go func() { done <- r.Wait() }()
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("a namespace's script failed: %v\nwriter:\n%s\nrestarter:\n%s", err, wout, rout)
			}
		case <-time.After(60 * time.Second):
			ps, _ := exec.Command("ps", "-eo", "pid,ppid,stat,wchan:24,args").CombinedOutput()
			w.Process.Kill()
			r.Process.Kill()
			wlog, _ := os.ReadFile(filepath.Join(logs, "writer.log"))
			rlog, _ := os.ReadFile(filepath.Join(logs, "restarter.log"))
			t.Fatalf("the namespaces' scripts did not end\nwriter:\n%s\nrestarter:\n%s\nprocesses:\n%s\nwriter's mount log:\n%s\nrestarter's mount logs (last 4 KiB):\n%s",
				wout, rout, ps, wlog, rlog[max(0, len(rlog)-4096):])
		}
	}
	// Wait out the lease of a mount that could not end its own (the
	// restarter's killed ones), then read the whole history.
	time.Sleep(lapseBound)
	all := env.versionList(t, storeID)
	temps := 0
	for _, v := range all {
		if v.Path != nil && strings.Contains(*v.Path, ".tmp-") {
			temps++
		}
	}
	if temps != 0 {
		t.Errorf("%d versions of temporary files in the history (of %d):%s", temps, len(all), describeVersions(all))
	}
	t.Logf("writer: %s; restarter: %s; history: %d versions, %d of temporary files",
		strings.TrimSpace(wout.String()), strings.TrimSpace(rout.String()), len(all), temps)
}
