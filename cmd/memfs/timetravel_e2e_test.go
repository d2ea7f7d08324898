package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// A store as of any moment, through the built binary, on both backends:
// the as-of tree and diff -r against the live tree, the session
// checkpoint a mount takes, restore --as-of, undo --session with a
// conflict, store fork with and without history, and the same over HTTP
// with a read-only key refused.
func TestTimeTravelE2E(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { timeTravel(t, newE2EEnv(t)) })
	t.Run("postgres", func(t *testing.T) {
		if pgtest.Server() == "" {
			t.Skip("MEMFS_TEST_POSTGRES is not set")
		}
		timeTravel(t, pgEnv(t, pgtest.Database(t)))
	})
}

// contents is path → content of a store's live memories.
func (e *e2eEnv) contents(t *testing.T, store string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p := range e.memoryList(t, store) {
		out[p] = e.cli(t, "memory", "get", store, p)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func timeTravel(t *testing.T, e *e2eEnv) {
	storeID, slug := e.createStore(t, "Notes")
	e.cli(t, "memory", "create", "Notes", "--path", "/a.md", "--content", "one\n")
	e.cli(t, "memory", "create", "Notes", "--path", "/dir/b.md", "--content", "bee\n")
	e.cli(t, "memory", "create", "Notes", "--path", "/keep.md", "--content", "kept\n")
	if got := strings.TrimSpace(e.cli(t, "checkpoint", "create", "Notes", "--name", "before", "--note", "start")); got != "before" {
		t.Fatalf("checkpoint create printed %q", got)
	}
	before := e.contents(t, "Notes")

	// A session writes through a mount, which took its checkpoint first.
	mnt := mountDir(t)
	d := e.startMount(t, mnt, "--store", "Notes")
	var cps versions.Page[versions.Checkpoint]
	e.cliJSON(t, &cps, "checkpoint", "list", "Notes")
	session := ""
	for _, c := range cps.Data {
		if c.Kind == versions.CheckpointSession {
			session = c.Name
		}
	}
	if !strings.HasPrefix(session, "sesn_") {
		t.Fatalf("the mount took no session checkpoint: %+v", cps.Data)
	}
	sh(t, mnt, "printf 'two\\n' > "+slug+"/a.md && rm "+slug+"/dir/b.md && printf 'sea\\n' > "+slug+"/c.md")
	ls := sh(t, mnt, "ls .history")
	for _, want := range []string{slug + "@before", slug + "@" + session} {
		if !strings.Contains(ls, want+"\n") {
			t.Errorf("ls .history lacks %s:\n%s", want, ls)
		}
	}
	// diff -r shows exactly what changed since; the store as the session
	// began is the checkpoint's.
	out, err := shErr(mnt, "diff -r .history/"+slug+"@before "+slug)
	if err == nil {
		t.Fatalf("diff -r found no change")
	}
	wantDiff := []string{"diff -r .history/" + slug + "@before/a.md " + slug + "/a.md", "< one", "> two",
		"Only in " + slug + ": c.md", "Only in .history/" + slug + "@before/dir: b.md"}
	for _, w := range wantDiff {
		if !strings.Contains(out, w) {
			t.Errorf("diff -r lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 7 {
		t.Errorf("diff -r printed %d lines, want 7 (a.md's change, c.md, b.md):\n%s", n, out)
	}
	if out, err := shErr(mnt, "diff -r .history/"+slug+"@before .history/"+slug+"@"+session); err != nil {
		t.Errorf("the store as the session began differs from the checkpoint before it: %v\n%s", err, out)
	}
	if out, err := shErr(mnt, "touch .history/"+slug+"@before/x"); err == nil || !strings.Contains(out, "Read-only") {
		t.Errorf("a write in the as-of tree: %v %s", err, out)
	}
	cp := filepath.Join(t.TempDir(), "copy")
	sh(t, mnt, "cp -r .history/"+slug+"@before "+cp)
	if b, err := os.ReadFile(filepath.Join(cp, "dir", "b.md")); err != nil || string(b) != "bee\n" {
		t.Errorf("cp -r out of the as-of tree: %q, %v", b, err)
	}
	d.stop(t, syscall.SIGTERM)

	// Undo: someone else changed c.md after the session: a conflict.
	e.cli(t, "memory", "update", "Notes", "/c.md", "--content", "someone else\n")
	stdout, stderr, code := e.run(t, "undo", "Notes", "--session", session)
	if code != 4 || !strings.Contains(stdout, "conflict") || !strings.Contains(stdout, "/c.md") {
		t.Fatalf("undo with a conflict: exit %d\n%s\n%s", code, stdout, stderr)
	}
	got := e.contents(t, "Notes")
	want := map[string]string{"/a.md": "one\n", "/dir/b.md": "bee\n", "/keep.md": "kept\n", "/c.md": "someone else\n"}
	if strings.Join(sortedKeys(got), "|") != strings.Join(sortedKeys(want), "|") {
		t.Errorf("after undo: %v, want %v", sortedKeys(got), sortedKeys(want))
	}
	e.cli(t, "undo", "Notes", "--session", session, "--force")
	if _, stderr, code := e.run(t, "undo", "--session", session); code != 0 || !strings.Contains(stderr, "nothing to do") {
		t.Errorf("a second undo: exit %d, %s", code, stderr)
	}
	if got := e.contents(t, "Notes"); strings.Join(sortedKeys(got), "|") != strings.Join(sortedKeys(before), "|") {
		t.Errorf("after a forced undo: %v, want %v", sortedKeys(got), sortedKeys(before))
	}

	// Restore as of the checkpoint: one version per changed memory, after
	// a safety checkpoint; a second run changes nothing.
	e.cli(t, "memory", "update", "Notes", "/a.md", "--content", "three\n", "--path", "/moved/a.md")
	e.cli(t, "memory", "delete", "Notes", "/keep.md")
	e.cli(t, "memory", "create", "Notes", "--path", "/new.md", "--content", "new\n")
	versionsBefore := len(e.versionList(t, "Notes"))
	dry, _, code := e.run(t, "restore", "Notes", "--as-of", "before", "--dry-run")
	if code != 0 || !strings.Contains(dry, "modify") || !strings.Contains(dry, "recreate") || !strings.Contains(dry, "delete") {
		t.Fatalf("restore --dry-run: exit %d\n%s", code, dry)
	}
	if n := len(e.versionList(t, "Notes")); n != versionsBefore {
		t.Fatalf("a dry run wrote %d versions", n-versionsBefore)
	}
	var plan struct {
		Applied bool                 `json:"applied"`
		Safety  *versions.Checkpoint `json:"safety_checkpoint"`
		Changes []versions.PlannedChange
	}
	e.cliJSON(t, &plan, "restore", "Notes", "--as-of", "before", "--yes")
	if !plan.Applied || plan.Safety == nil || len(plan.Changes) != 3 {
		t.Fatalf("restore --as-of: %+v", plan)
	}
	if n := len(e.versionList(t, "Notes")); n != versionsBefore+3 {
		t.Errorf("restore wrote %d versions, want 3 (one per changed memory)", n-versionsBefore)
	}
	if got := e.contents(t, "Notes"); strings.Join(sortedKeys(got), "|") != strings.Join(sortedKeys(before), "|") {
		t.Errorf("after restore: %v, want %v", sortedKeys(got), sortedKeys(before))
	}
	e.cliJSON(t, &plan, "restore", "Notes", "--as-of", "before")
	if plan.Applied || len(plan.Changes) != 0 {
		t.Errorf("a second restore changed %+v", plan.Changes)
	}

	// Fork: independent, with and without history.
	forkID := strings.TrimSpace(e.cli(t, "store", "fork", "Notes", "--name", "Fork"))
	e.cli(t, "memory", "update", "Fork", "/a.md", "--content", "forked\n")
	if got := e.cli(t, "memory", "get", "Notes", "/a.md"); got != "one\n" {
		t.Errorf("the fork's change reached the original: %q", got)
	}
	if n := len(e.versionList(t, forkID)); n != len(before)+1 {
		t.Errorf("a fork without history holds %d versions, want %d", n, len(before)+1)
	}
	e.cli(t, "store", "fork", "Notes", "--name", "Old", "--as-of", "before", "--with-history")
	if n := len(e.versionList(t, "Old")); n != 3 {
		t.Errorf("a fork with history as of before holds %d versions, want 3", n)
	}
	for _, bad := range [][]string{
		{"store", "fork", "Notes", "--name", "Fork"},
		{"restore", "Notes", "--as-of", "2001-01-01"},
		{"restore", "Notes", "--as-of", "nope"},
		{"restore", "Notes", "--as-of", "2999-01-01"},
		{"checkpoint", "delete", "Notes", "nope"},
		{"checkpoint", "create", "Notes", "--name", "2026-12-01"},
	} {
		_, stderr, code := e.run(t, bad...)
		if code == 0 || code == 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("memfs %s: exit %d, stderr %q: want a one-line error with its exit code", strings.Join(bad, " "), code, stderr)
		}
	}

	// Over HTTP.
	srv := e.startServe(t)
	key := e.apiKey(t)
	ro := strings.TrimSpace(e.cli(t, "apikey", "create", "--name", "ro", "--read-only"))
	call := func(key, method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, srv.url+path, rd)
		req.Header.Set("x-api-key", key)
		req.Header.Set("content-type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	base := "/memfs/v1/memory_stores/" + storeID
	if code, body := call(ro, "POST", base+"/checkpoints", map[string]any{"name": "web"}); code != 403 {
		t.Errorf("a read-only key made a checkpoint: %d %v", code, body)
	}
	if code, body := call(ro, "POST", base+"/restore", map[string]any{"as_of": "before"}); code != 403 {
		t.Errorf("a read-only key restored: %d %v", code, body)
	}
	if code, body := call(key, "POST", base+"/checkpoints", map[string]any{"name": "web"}); code != 200 || body["name"] != "web" {
		t.Errorf("POST checkpoints: %d %v", code, body)
	}
	e.cli(t, "memory", "update", "Notes", "/a.md", "--content", "http\n")
	if code, body := call(ro, "GET", base+"/as_of?when=before&view=full", nil); code != 200 || len(body["data"].([]any)) != 3 {
		t.Errorf("GET as_of with a read-only key: %d %v", code, body)
	}
	if code, body := call(key, "POST", base+"/restore", map[string]any{"as_of": "web", "dry_run": true}); code != 200 || body["modified"] != float64(1) || body["applied"] != false {
		t.Errorf("POST restore (dry run): %d %v", code, body)
	}
	if code, body := call(key, "POST", base+"/restore", map[string]any{"as_of": "web"}); code != 200 || body["applied"] != true {
		t.Errorf("POST restore: %d %v", code, body)
	}
	if code, body := call(key, "POST", base+"/fork", map[string]any{"name": "Web Fork", "as_of": "before"}); code != 200 || body["memories"] != float64(3) {
		t.Errorf("POST fork: %d %v", code, body)
	}
	if code, body := call(key, "POST", base+"/undo", map[string]any{"session_id": session}); code != 200 {
		t.Errorf("POST undo: %d %v", code, body)
	}
	if code, body := call(key, "GET", base+"/as_of?when=nope", nil); code != 400 {
		t.Errorf("GET as_of of a bad moment: %d %v", code, body)
	}
	if code, body := call(key, "DELETE", base+"/checkpoints/web", nil); code != 200 {
		t.Errorf("DELETE checkpoint: %d %v", code, body)
	}
}

// memfs run takes a checkpoint as its session begins, and the agent sees
// it in .history; --checkpoint=false takes none.
func TestRunCheckpoint(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	e.ok(t, "memory", "create", "Agent Notes", "--path", "/n.md", "--content", "first\n")
	script := `
check() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "ok $name"; else echo "FAIL $name"; fi; }
check listed sh -c 'ls "$ROOT/.history" | grep -q "^agent-notes@sesn_"'
check as-of sh -c 'cat "$ROOT"/.history/agent-notes@sesn_*/n.md | grep -q first'
echo second > "$ROOT/agent-notes/n.md"
`
	out, errs, code := e.memfs(t, "run", "--store", "Agent Notes", "--mount-root", e.root, "--pass-env", "ROOT", "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("memfs run exited %d\n%s\n%s", code, out, errs)
	}
	got := runChecks(out)
	for _, name := range []string{"listed", "as-of"} {
		if !got[name] {
			t.Errorf("check %s failed\n%s", name, out)
		}
	}
	var cps versions.Page[versions.Checkpoint]
	e.json(t, &cps, "checkpoint", "list", "Agent Notes")
	if len(cps.Data) != 1 || cps.Data[0].Kind != versions.CheckpointSession {
		t.Fatalf("checkpoints after a run: %+v", cps.Data)
	}
	e.ok(t, "undo", "Agent Notes", "--session", cps.Data[0].Name, "--yes")
	if got := e.ok(t, "memory", "get", "Agent Notes", "/n.md"); got != "first" {
		t.Errorf("after undo of the run: %q", got)
	}
	if _, _, code := e.memfs(t, "run", "--checkpoint=false", "--store", "Agent Notes", "--mount-root", e.root, "--", "true"); code != 0 {
		t.Fatalf("memfs run --checkpoint=false exited %d", code)
	}
	e.json(t, &cps, "checkpoint", "list", "Agent Notes")
	if len(cps.Data) != 2 { // the first run's, and the undo's safety checkpoint
		t.Errorf("--checkpoint=false took one: %+v", cps.Data)
	}
}
