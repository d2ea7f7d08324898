package main

// A newcomer's third pass: history that reads like git's, ids that never
// collide, and a writable folder per attachment. Each test drives the
// built binary.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// onelineIDs are the short ids memfs log --oneline prints, newest first.
func onelineIDs(t *testing.T, e *e2eEnv, args ...string) []string {
	t.Helper()
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(e.cli(t, append([]string{"log", "--oneline"}, args...)...)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			ids = append(ids, f[0])
		}
	}
	return ids
}

func wantUnique(t *testing.T, what string, ids []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("%s: the short id %s is shown twice: %v", what, id, ids)
		}
		seen[id] = true
	}
}

// Saves after an import of a pruned store never reuse an imported version's
// short id, and every short id the log shows names its version.
func TestThirdPassShortIDsNeverCollideAfterImport(t *testing.T) {
	shortIDsAfterImport(t, newE2EEnv(t))
}

// The same into PostgreSQL, where the collision was first seen.
func TestPostgresShortIDsNeverCollideAfterImport(t *testing.T) {
	if pgtest.Server() == "" {
		t.Skipf("needs a PostgreSQL server: set %s (scripts/pg start prints a URL)", pgtest.Env)
	}
	shortIDsAfterImport(t, pgEnv(t, pgtest.Database(t)))
}

func shortIDsAfterImport(t *testing.T, dst *e2eEnv) {
	src := newE2EEnv(t)
	src.createStore(t, "Notes")
	src.cli(t, "memory", "create", "Notes", "--path", "/todo.md", "--content", "0")
	for i := 1; i < 12; i++ {
		src.cli(t, "memory", "update", "Notes", "/todo.md", "--content", strings.Repeat("x", i))
	}
	src.cli(t, "version", "prune", "Notes", "--older-than", "0s", "--keep-last", "3", "--yes")
	export := src.cli(t, "export", "Notes")

	importInto(t, dst, export)
	for i := 0; i < 10; i++ {
		dst.cli(t, "memory", "update", "Notes", "/todo.md", "--content", strings.Repeat("y", i+1))
	}
	ids := onelineIDs(t, dst, "Notes")
	if len(ids) != 13 {
		t.Fatalf("log shows %d versions, want 13: %v", len(ids), ids)
	}
	wantUnique(t, "after an import", ids)
	for _, id := range ids {
		if _, errs, code := dst.run(t, "version", "get", "Notes", id); code != 0 {
			t.Errorf("version get Notes %s: exit %d: %s", id, code, errs)
		}
	}
}

// An id that already shares its end with another is shown longer, as git
// lengthens an abbreviated hash, and the longer form names it.
func TestThirdPassShortIDsLengthenWhenTheyClash(t *testing.T) {
	src := newE2EEnv(t)
	src.createStore(t, "Notes")
	src.cli(t, "memory", "create", "Notes", "--path", "/a.md", "--content", "1")
	src.cli(t, "memory", "update", "Notes", "/a.md", "--content", "2")
	vs := src.versionList(t, "Notes") // newest first
	// The second version gets an id of the old random form whose end is
	// what the next save in the new store will end in (its third place).
	old := vs[0].ID
	crafted := old[:len(old)-16] + "ZZZZZZZZ" + "00000003"
	export := strings.ReplaceAll(src.cli(t, "export", "Notes"), old, crafted)

	dst := newE2EEnv(t)
	importInto(t, dst, export)
	dst.cli(t, "memory", "update", "Notes", "/a.md", "--content", "3")
	ids := onelineIDs(t, dst, "Notes")
	wantUnique(t, "with a clash", ids)
	if len(ids[0]) <= 8 || len(ids[1]) <= 8 || len(ids[2]) != 8 {
		t.Errorf("short ids %v: want the two that end alike lengthened, the other 8 characters", ids)
	}
	if _, errs, code := dst.run(t, "version", "get", "Notes", "00000003"); code != exitInvalid || !strings.Contains(errs, "give more characters") {
		t.Errorf("version get of an end two ids share: exit %d %q, want %d asking for more characters", code, errs, exitInvalid)
	}
	for _, id := range ids {
		if _, errs, code := dst.run(t, "version", "get", "Notes", id); code != 0 {
			t.Errorf("version get Notes %s: exit %d: %s", id, code, errs)
		}
	}
}

func importInto(t *testing.T, e *e2eEnv, export string) {
	t.Helper()
	cmd := exec.Command(memfsBin, "import")
	cmd.Env = e.environ()
	cmd.Stdin = strings.NewReader(export)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
}

// restore --path to another path makes a new memory and leaves the live
// one; its help says what the default path is.
func TestThirdPassRestoreToAnotherPathCopies(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	id := strings.TrimSpace(e.cli(t, "memory", "create", "Notes", "--path", "/todo.md", "--content", "milk"))
	e.cli(t, "memory", "update", "Notes", "/todo.md", "--content", "oat milk")
	out, errs, code := e.run(t, "restore", "Notes", "/todo.md~1", "--path", "/restored.md")
	if code != 0 || strings.TrimSpace(out) == id || !strings.Contains(errs, "new memory") || !strings.Contains(errs, "/todo.md is unchanged") {
		t.Fatalf("restore --path /restored.md: exit %d, %q, %q; want a new memory and a word that /todo.md is unchanged", code, out, errs)
	}
	if got := e.cli(t, "memory", "get", "Notes", "/todo.md"); got != "oat milk" {
		t.Errorf("/todo.md after restoring to another path: %q", got)
	}
	if got := e.cli(t, "memory", "get", "Notes", "/restored.md"); got != "milk" {
		t.Errorf("/restored.md: %q", got)
	}
	// The default path is where the memory is now.
	e.cli(t, "memory", "update", "Notes", "/todo.md", "--path", "/moved.md")
	e.cli(t, "restore", "Notes", "/todo.md~1") // saved at /todo.md, the memory is at /moved.md now
	if got := e.cli(t, "memory", "get", "Notes", "/moved.md"); got != "milk" {
		t.Errorf("/moved.md after restore without --path: %q", got)
	}
	if help := e.cli(t, "restore", "--help"); !strings.Contains(help, "the memory's path now") {
		t.Errorf("restore --help does not say the default path is the memory's path now:\n%s", help)
	}
}

// log shows a rename at both paths, --follow follows one memory across
// its paths, and a restored deleted memory's log links both memories.
func TestThirdPassLogRenamesFollowAndUndelete(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	old := strings.TrimSpace(e.cli(t, "memory", "create", "Notes", "--path", "/ada.md", "--content", "Ada"))
	e.cli(t, "memory", "update", "Notes", "/ada.md", "--path", "/people/ada.md")
	for _, p := range []string{"/ada.md", "/people/ada.md"} {
		if got := e.cli(t, "log", "Notes", p); !strings.Contains(got, "/ada.md → /people/ada.md") {
			t.Errorf("log Notes %s does not show the rename:\n%s", p, got)
		}
	}
	if got := e.cli(t, "log", "--oneline", "--follow", "Notes", "/people/ada.md"); !strings.Contains(got, "created /ada.md") {
		t.Errorf("log --follow does not reach the memory's first path:\n%s", got)
	}
	e.cli(t, "memory", "delete", "Notes", "/people/ada.md")
	newID := strings.TrimSpace(e.cli(t, "restore", "Notes", "/people/ada.md~1"))
	if newID == old {
		t.Fatalf("restore of a deleted memory kept its id")
	}
	for _, id := range []string{old, newID} {
		var page versions.Page[versions.Version]
		e.cliJSON(t, &page, "log", "Notes", id)
		mems := map[string]bool{}
		for _, v := range page.Data {
			mems[v.MemoryID] = true
		}
		if !mems[old] || !mems[newID] {
			t.Errorf("log Notes %s shows memories %v, want both the deleted one and the one restored from it", id, mems)
		}
	}
}

// log -p prints its header once, --format json log -p carries each diff,
// --stat counts lines, -S finds the version that added a word, and
// memory get PATH~N prints an old version.
func TestThirdPassLogPatchStatPickaxe(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	e.cli(t, "memory", "create", "Notes", "--path", "/a.md", "--content", "one\n")
	e.cli(t, "memory", "update", "Notes", "/a.md", "--content", "one\ntwo\n")
	e.cli(t, "memory", "update", "Notes", "/a.md", "--content", "one\ntwo\nthree\n")
	if got := e.cli(t, "log", "-p", "Notes"); strings.Count(got, "OPERATION") != 1 || strings.Count(got, "@@ -") != 3 {
		t.Errorf("log -p: want one header and three diffs:\n%s", got)
	}
	var page struct {
		Data []struct {
			ID   string  `json:"id"`
			Diff *string `json:"diff"`
		} `json:"data"`
	}
	e.cliJSON(t, &page, "log", "-p", "Notes")
	if len(page.Data) != 3 || page.Data[0].Diff == nil || !strings.Contains(*page.Data[0].Diff, "+three") {
		t.Errorf("--format json log -p: %+v, want each version's diff", page.Data)
	}
	if got := e.cli(t, "log", "--stat", "Notes"); !strings.Contains(got, "/a.md | 1 +") {
		t.Errorf("log --stat:\n%s", got)
	}
	got := strings.TrimSpace(e.cli(t, "log", "--oneline", "-S", "two", "Notes"))
	if lines := strings.Split(got, "\n"); len(lines) != 1 || !strings.Contains(lines[0], "modified") {
		t.Errorf("log -S two: want the one version that added it:\n%s", got)
	}
	if got := e.cli(t, "memory", "get", "Notes", "/a.md~2"); got != "one\n" {
		t.Errorf("memory get /a.md~2: %q", got)
	}
	if _, errs, code := e.run(t, "log", "Notes", "-n"); code != exitUsage || !strings.Contains(errs, "-n needs a value") {
		t.Errorf("log Notes -n: exit %d %q, want %d saying -n needs a value", code, errs, exitUsage)
	}
	// A bad path, as memory create refuses it (TestNewcomer3TypoHints).
	if _, errs, code := e.run(t, "memory", "get", "Notes", "a.md"); code != exitInvalid || !strings.Contains(errs, "start with /") {
		t.Errorf("memory get Notes a.md: exit %d %q, want %d saying paths start with /", code, errs, exitInvalid)
	}
}

// log --watch prints a save made while it runs, and refuses what would
// narrow it rather than ignore it.
func TestThirdPassLogWatch(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	for _, args := range [][]string{{"Notes", "/a.md"}, {"Notes", "--actor", "root"}, {"Notes", "-S", "x"}, {"Notes", "-n", "1"}} {
		if _, errs, code := e.run(t, append([]string{"log", "--watch"}, args...)...); code != exitUsage || !strings.Contains(errs, "STORE alone") {
			t.Errorf("log --watch %s: exit %d %q, want %d", strings.Join(args, " "), code, errs, exitUsage)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, memfsBin, "log", "--watch", "Notes")
	cmd.Env = e.environ()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		cmd.Wait()
	}()
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	time.Sleep(500 * time.Millisecond) // the watcher reads the feed's head first
	e.cli(t, "memory", "create", "Notes", "--path", "/watched.md", "--content", "x")
	select {
	case l := <-lines:
		if !strings.Contains(l, "created /watched.md") {
			t.Errorf("log --watch printed %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("log --watch printed nothing for a save")
	}
}

// Session ids: the end log shows works everywhere, an unknown session is
// exit 3, and ending twice or revoking twice says so.
func TestThirdPassSessionIDs(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	sess := strings.TrimSpace(e.cli(t, "session", "create", "--store", "Notes"))
	e.tool(t, []string{`{"command":"create","path":"/memories/s.md","file_text":"s"}`}, "Notes", "--session", sess)
	short := shortID(sess)
	if got := e.cli(t, "log", "Notes", "--actor", short); !strings.Contains(got, "/s.md") {
		t.Errorf("log --actor %s:\n%s", short, got)
	}
	if got := e.cli(t, "version", "list", "Notes", "--session", short); !strings.Contains(got, "/s.md") {
		t.Errorf("version list --session %s:\n%s", short, got)
	}
	if got := e.cli(t, "session", "get", short); !strings.Contains(got, sess) {
		t.Errorf("session get %s:\n%s", short, got)
	}
	for _, args := range [][]string{{"version", "list", "Notes", "--session", "bogus"}, {"session", "get", "BOGUS123"}, {"log", "Notes", "--actor", "sesn_nope"}} {
		if _, errs, code := e.run(t, args...); code != exitNotFound {
			t.Errorf("memfs %s: exit %d %q, want %d", strings.Join(args, " "), code, errs, exitNotFound)
		}
	}
	if _, errs, _ := e.run(t, "session", "end", short); !strings.Contains(errs, "ended session") {
		t.Errorf("first session end: %q", errs)
	}
	if _, errs, code := e.run(t, "session", "end", sess); code != 0 || !strings.Contains(errs, "already ended") {
		t.Errorf("second session end: exit %d %q, want 0 and already ended", code, errs)
	}
	keyID := ""
	var keys versions.Page[versions.APIKey]
	e.cli(t, "apikey", "create", "--name", "k")
	e.cliJSON(t, &keys, "apikey", "list")
	keyID = keys.Data[0].ID
	e.cli(t, "apikey", "revoke", keyID)
	if _, errs, code := e.run(t, "apikey", "revoke", keyID); code != 0 || !strings.Contains(errs, "already revoked") {
		t.Errorf("second apikey revoke: exit %d %q, want 0 and already revoked", code, errs)
	}
}

// A write prefix: the tool acting for the session writes only in its
// folder (exit 6 for a refusal), HTTP refuses the rest with 403, and the
// session object and prompt say which folder is writable.
func TestThirdPassWritePrefixToolAndHTTP(t *testing.T) {
	e := newE2EEnv(t)
	store, _ := e.createStore(t, "Notes")
	e.cli(t, "memory", "create", "Notes", "--path", "/shared.md", "--content", "everyone")
	sess := strings.TrimSpace(e.cli(t, "session", "create", "--store", "Notes", "--write-prefix", "Notes=/projects/p1/"))
	var obj map[string]any
	e.cliJSON(t, &obj, "session", "get", sess)
	if res := obj["resources"].([]any)[0].(map[string]any); res["write_prefix"] != "/projects/p1/" {
		t.Errorf("session get --format json: resource %v, want write_prefix /projects/p1/", res)
	}
	if got := e.cli(t, "session", "prompt", sess); !strings.Contains(got, "projects/p1/, the one folder you may write in") {
		t.Errorf("the prompt does not say which folder is writable:\n%s", got)
	}
	if _, errs, code := e.run(t, "session", "create", "--store", "Notes", "--write-prefix", "Notes=projects"); code != exitInvalid {
		t.Errorf("--write-prefix Notes=projects: exit %d %q, want %d", code, errs, exitInvalid)
	}

	run := func(lines ...string) ([]toolResult, int) {
		cmd := exec.Command(memfsBin, "tool", "Notes", "--session", sess)
		cmd.Env = e.environ()
		cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
		out, _ := cmd.Output()
		var res []toolResult
		dec := json.NewDecoder(strings.NewReader(string(out)))
		for dec.More() {
			var r toolResult
			if err := dec.Decode(&r); err != nil {
				t.Fatal(err)
			}
			res = append(res, r)
		}
		return res, cmd.ProcessState.ExitCode()
	}
	res, code := run(`{"command":"create","path":"/memories/projects/p1/a.md","file_text":"mine"}`)
	if code != 0 || len(res) != 1 || res[0].IsError {
		t.Errorf("tool create inside the prefix: exit %d %+v", code, res)
	}
	for _, cmd := range []string{
		`{"command":"create","path":"/memories/other.md","file_text":"x"}`,
		`{"command":"str_replace","path":"/memories/shared.md","old_str":"everyone","new_str":"me"}`,
		`{"command":"rename","old_path":"/memories/projects/p1/a.md","new_path":"/memories/a.md"}`,
		`{"command":"rename","old_path":"/memories/shared.md","new_path":"/memories/projects/p1/shared.md"}`,
	} {
		res, code := run(cmd)
		if code != exitReadOnly || len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Content, "only /memories/projects/p1/ is writable") {
			t.Errorf("tool %s: exit %d %+v, want %d and a refusal naming the writable folder", cmd, code, res, exitReadOnly)
		}
	}
	if got := e.cli(t, "memory", "get", "Notes", "/shared.md"); got != "everyone" {
		t.Errorf("/shared.md after refused changes: %q", got)
	}

	key := strings.TrimSpace(e.cli(t, "apikey", "create", "--name", "harness", "--session", sess))
	srv := e.startServe(t)
	post := func(body string) (int, string) {
		req, _ := http.NewRequest("POST", srv.url+"/v1/memory_stores/"+store+"/memory_tool", strings.NewReader(body))
		req.Header.Set("x-api-key", key)
		req.Header.Set(memtool.SessionHeader, sess)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(`{"command":"create","path":"/memories/projects/p1/b.md","file_text":"b"}`); code != 200 {
		t.Errorf("HTTP create inside the prefix: %d %s", code, body)
	}
	if code, body := post(`{"command":"create","path":"/memories/b.md","file_text":"b"}`); code != 403 || !strings.Contains(body, "permission_error") {
		t.Errorf("HTTP create outside the prefix: %d %s, want 403 permission_error", code, body)
	}
	req, _ := http.NewRequest("GET", srv.url+"/v1/sessions/"+sess, nil)
	req.Header.Set("x-api-key", e.apiKey(t))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"write_prefix":"/projects/p1/"`) {
		t.Errorf("GET /v1/sessions/%s does not show the write prefix: %s", sess, b)
	}
}

// A write prefix through a mount: writes, sed -i and mkdir -p inside it
// work; everything outside is EROFS, and so are renames across it.
func TestThirdPassWritePrefixMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts need root here")
	}
	e := newE2EEnv(t)
	_, slug := e.createStore(t, "Notes")
	e.cli(t, "memory", "create", "Notes", "--path", "/shared.md", "--content", "everyone\n")
	mnt := mountDir(t)
	e.startMount(t, mnt, "--store", "Notes", "--write-prefix", "Notes=/projects/p1/")
	dir := filepath.Join(mnt, slug)
	sh(t, dir, "mkdir -p projects/p1 && echo mine > projects/p1/a.md && sed -i s/mine/ours/ projects/p1/a.md")
	for _, script := range []string{
		"echo x > other.md",
		"echo x >> shared.md",
		"mv projects/p1/a.md a.md",
		"mv shared.md projects/p1/shared.md",
		"mkdir elsewhere",
		"rm shared.md",
	} {
		out, err := shErr(dir, script)
		if err == nil || !strings.Contains(out, "Read-only file system") {
			t.Errorf("%s outside the write prefix: %v %q, want EROFS", script, err, out)
		}
	}
	e.settle(t)
	if got := e.cli(t, "memory", "get", "Notes", "/projects/p1/a.md"); got != "ours\n" {
		t.Errorf("/projects/p1/a.md: %q", got)
	}
	if got := e.cli(t, "memory", "get", "Notes", "/shared.md"); got != "everyone\n" {
		t.Errorf("/shared.md: %q", got)
	}
}

// memfs run with a write prefix: the command writes in its folder and
// nowhere else, and its prompt says so.
func TestThirdPassWritePrefixRun(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	script := `cat "$MEMFS_PROMPT_FILE" > ` + e.out + `/prompt
mkdir -p /mnt/memory/agent-notes/projects/p1 && echo in > /mnt/memory/agent-notes/projects/p1/in.md
if echo out 2>` + e.out + `/err > /mnt/memory/agent-notes/out.md; then echo wrote > ` + e.out + `/outside; fi`
	_, errs, code := e.memfs(t, "run", "--store", "Agent Notes", "--write-prefix", "Agent Notes=/projects/p1/", "--rw", e.out, "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("memfs run: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(e.out, "outside")); err == nil {
		t.Errorf("the command wrote outside its write prefix")
	}
	if b, _ := os.ReadFile(filepath.Join(e.out, "err")); !strings.Contains(string(b), "Read-only file system") {
		t.Errorf("a write outside the prefix failed with %q, want EROFS", b)
	}
	if b, _ := os.ReadFile(filepath.Join(e.out, "prompt")); !strings.Contains(string(b), "/mnt/memory/agent-notes/projects/p1/, the one folder you may write in") {
		t.Errorf("the prompt does not name the writable folder:\n%s", b)
	}
	if got := e.ok(t, "memory", "get", "Agent Notes", "/projects/p1/in.md"); got != "in" {
		t.Errorf("/projects/p1/in.md: %q", got)
	}
}

// serve's failures have the documented exit codes, and every command that
// destroys or rewrites needs --yes without a terminal.
func TestThirdPassExitCodesAndYes(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	e.cli(t, "memory", "create", "Notes", "--path", "/a.md", "--content", "1")
	sess := strings.TrimSpace(e.cli(t, "session", "create", "--store", "Notes"))
	e.tool(t, []string{`{"command":"str_replace","path":"/memories/a.md","old_str":"1","new_str":"2"}`}, "Notes", "--session", sess)
	e.cli(t, "session", "end", sess)
	if _, errs, code := e.run(t, "serve", "--listen", "banana"); code != exitUsage || strings.Contains(errs, "another server") {
		t.Errorf("serve --listen banana: exit %d %q, want %d", code, errs, exitUsage)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, errs, code := e.run(t, "serve", "--listen", ln.Addr().String()); code != exitConflict || !strings.Contains(errs, "another server") {
		t.Errorf("serve on a port in use: exit %d %q, want %d", code, errs, exitConflict)
	}
	old := e.versionList(t, "Notes")[1].ID
	for _, args := range [][]string{
		{"store", "archive", "Notes"},
		{"store", "delete", "Notes"},
		{"version", "redact", "Notes", old},
		{"version", "prune", "Notes", "--older-than", "0s", "--keep-last", "1"},
		{"restore", "Notes", "--as-of", sess}, // the store as the session began
		{"undo", "Notes", "--session", sess},
	} {
		if _, errs, code := e.run(t, args...); code != exitUsage || !strings.Contains(errs, "--yes") {
			t.Errorf("memfs %s without a terminal or --yes: exit %d %q, want %d naming --yes", strings.Join(args, " "), code, errs, exitUsage)
		}
	}
	if got := len(e.versionList(t, "Notes")); got != 2 {
		t.Errorf("refused commands changed the history: %d versions", got)
	}
	e.cli(t, "version", "redact", "Notes", old, "--yes")
}

// run checks its command before it makes a session; scan and PATH~N
// count in words.
func TestThirdPassRunMissingCommandAndPlurals(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "Notes")
	_, errs, code := e.run(t, "run", "--store", "Notes", "--", "no-such-agent-xyz")
	if code != 127 || !strings.Contains(errs, "command not found") || !strings.Contains(errs, "no session was made") {
		t.Errorf("run of a missing command: exit %d %q, want 127 before any session", code, errs)
	}
	if got := strings.TrimSpace(e.cli(t, "session", "list")); strings.Contains(got, "sesn_") {
		t.Errorf("run of a missing command made a session:\n%s", got)
	}
	e.cli(t, "memory", "create", "Notes", "--path", "/one.md", "--content", "1")
	if _, errs, _ := e.run(t, "memory", "get", "Notes", "/one.md~1"); !strings.Contains(errs, "has 1 version,") {
		t.Errorf("memory get of a ~N past a path's only version: %q, want \"has 1 version\"", errs)
	}
	e.cli(t, "store", "update", "Notes", "--guard", "warn")
	e.cli(t, "memory", "create", "Notes", "--path", "/k.md", "--content", "AKIA"+"IOSFODNN7EXAMPLQ aws\n") // split: the guard's false-positive corpus reads this file
	_, errs, _ = e.run(t, "scan", "Notes")
	if !strings.Contains(errs, "1 credential in 1 version ") {
		t.Errorf("scan of one credential: %q, want 1 credential in 1 version", errs)
	}
}
