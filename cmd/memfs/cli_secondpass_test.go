package main

// A newcomer's second pass: each test is one thing a new user met, run
// through the built binary.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// `printf 'bad \xff' > f` in a mount fails in the shell (the write is
// refused with EILSEQ), and the refusal names the store and the path.
func TestSecondPassInvalidUTF8Write(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts need root here")
	}
	env := newE2EEnv(t)
	_, slug := env.createStore(t, "Notes")
	mnt := mountDir(t)
	d := env.startMount(t, mnt, "--store", "Notes")
	dir := filepath.Join(mnt, slug)
	sh(t, dir, "printf 'good\\n' > kept.md")

	for _, name := range []string{"bin.md", "kept.md"} {
		out, err := shErr(dir, "bash -c \"printf 'bad \\377' > "+name+"\"")
		if err == nil {
			t.Errorf("printf 'bad \\xff' > %s exited 0 (%q), want a failed write", name, out)
		} else if !strings.Contains(out, "Invalid or incomplete multibyte") {
			t.Errorf("printf 'bad \\xff' > %s: %q, want the shell to report EILSEQ", name, out)
		}
	}
	env.settle(t)
	// The new file is not kept (its only save was refused). `>` emptied
	// the existing one before the write, as on any file system; none of
	// the refused bytes are stored.
	if _, err := os.Stat(filepath.Join(dir, "bin.md")); !os.IsNotExist(err) {
		t.Errorf("bin.md after its refused write: %v, want it gone", err)
	}
	if got := env.cli(t, "memory", "get", "Notes", "/kept.md"); strings.Contains(got, "bad") {
		t.Errorf("kept.md after a refused write holds %q", got)
	}
	// The daemon's stderr reaches the test through a pipe: wait for it.
	logged := func(want string) bool {
		_, ok := waitFor(func() bool { return strings.Contains(d.stderr.String(), want) }, time.Now(), 5*time.Second)
		return ok
	}
	logged("op=write store=notes path=/kept.md")
	log := d.stderr.String()
	if !strings.Contains(log, "op=write store=notes path=/bin.md errno=EILSEQ") {
		t.Errorf("the daemon's log does not name the refused write, its store and path:\n%s", log)
	}
	// Sentences in values stay readable: the handler quotes them.
	if strings.Contains(log, `\\x`) || !strings.Contains(log, "(the previous version stays the head); write") {
		t.Errorf("the daemon's log escapes punctuation in quoted values:\n%s", log)
	}
	// The mount root's refusals say so.
	if _, err := shErr(mnt, "echo x > x.md"); err == nil {
		t.Errorf("a write in the mount root succeeded")
	}
	if !logged(`store="(the mount root)" path=/x.md errno=EROFS`) {
		t.Errorf("a refusal in the mount root does not say so:\n%s", d.stderr.String())
	}
}

// A mistyped --db makes no database: only store create, apikey create and
// an import that succeeds make one.
func TestSecondPassNoDatabaseAtTypo(t *testing.T) {
	env := newE2EEnv(t)
	typo := filepath.Join(t.TempDir(), "typo.db")
	for _, args := range [][]string{
		{"apikey", "list"}, {"apikey", "revoke", "key_x"}, {"tool", "Notes"}, {"serve", "--listen", "127.0.0.1:0"},
		{"session", "list"}, {"store", "list"}, {"memory", "create", "Notes", "--path", "/a.md", "--content", "x"},
		{"import"},
	} {
		_, errs, code := env.run(t, append([]string{"--db", typo}, args...)...)
		if code == 0 {
			t.Errorf("memfs --db typo.db %s: exit 0", strings.Join(args, " "))
		}
		if args[0] != "import" && (code != exitNotFound || !strings.Contains(errs, "no memfs database at "+typo) || !strings.Contains(errs, "store create")) {
			t.Errorf("memfs --db typo.db %s: exit %d, %q; want %d naming the path and how to create one", strings.Join(args, " "), code, errs, exitNotFound)
		}
		if _, err := os.Stat(typo); !os.IsNotExist(err) {
			t.Fatalf("memfs --db typo.db %s left a database behind (%v)", strings.Join(args, " "), err)
		}
	}
	env.cli(t, "--db", typo, "store", "create", "--name", "Notes")
	if _, err := os.Stat(typo); err != nil {
		t.Errorf("store create made no database: %v", err)
	}
}

// serve on a database without a usable key says how to make one.
func TestSecondPassServeWithoutKeyWarns(t *testing.T) {
	env := newE2EEnv(t)
	env.createStore(t, "Notes")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, memfsBin, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = env.environ()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cancel()
	if _, ok := waitFor(func() bool { return strings.Contains(stderr.String(), "serving the memory-store API") }, time.Now(), e2eReadyTimeout); !ok {
		t.Fatalf("serve did not start:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "no API key") || !strings.Contains(stderr.String(), "memfs apikey create") {
		t.Errorf("serve on a database without keys does not say so:\n%s", stderr.String())
	}
}

// A second store of a name some store has is refused (exit 4, naming the
// first one's id); --allow-duplicate makes it, and the name then fails
// with exit 5 until an id is given.
func TestSecondPassDuplicateStoreName(t *testing.T) {
	e := newCLIEnv(t)
	first := strings.TrimSpace(e.ok(t, "store", "create", "--name", "Notes"))
	_, errs, code := e.exec(t, "", "store", "create", "--name", "Notes")
	if code != exitConflict || !strings.Contains(errs, first) || !strings.Contains(errs, "--allow-duplicate") {
		t.Errorf("second store create --name Notes: exit %d, %q; want %d naming %s and --allow-duplicate", code, errs, exitConflict, first)
	}
	if got := e.list(t, "store", "list"); len(got) != 1 {
		t.Fatalf("the refused create made a store: %d stores", len(got))
	}
	other := strings.TrimSpace(e.ok(t, "store", "create", "--name", "Other"))
	if _, errs, code := e.exec(t, "", "store", "update", "Other", "--name", "Notes"); code != exitConflict || !strings.Contains(errs, first) {
		t.Errorf("store update --name to a taken name: exit %d, %q", code, errs)
	}
	// An archived store's name is taken too: names find archived stores.
	e.ok(t, "store", "archive", "Notes", "--yes")
	if _, _, code := e.exec(t, "", "store", "create", "--name", "Notes"); code != exitConflict {
		t.Errorf("store create with an archived store's name: exit %d, want %d", code, exitConflict)
	}
	second := strings.TrimSpace(e.ok(t, "store", "create", "--name", "Notes", "--allow-duplicate"))
	if _, errs, code := e.exec(t, "", "store", "get", "Notes"); code != exitInvalid || !strings.Contains(errs, "memstore_ id") {
		t.Errorf("store get of a duplicate name: exit %d, %q; want %d asking for the id", code, errs, exitInvalid)
	}
	e.ok(t, "store", "get", second)
	e.ok(t, "store", "update", other, "--name", "Other") // its own name
}

// store archive asks on a terminal, as delete does; --yes and scripts
// are not asked.
func TestSecondPassArchiveConfirms(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("needs script(1) for a terminal")
	}
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "A")
	e.ok(t, "store", "create", "--name", "B")
	run := func(answer string, args ...string) string {
		cmd := exec.Command(script, "-qec", strings.Join(append([]string{memfsBin}, quoteAll(args)...), " "), "/dev/null")
		cmd.Env = append(os.Environ(), "MEMFS_DB="+e.db)
		cmd.Stdin = strings.NewReader(answer)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	archived := func(name string) bool {
		return e.obj(t, "store", "get", name)["archived_at"] != nil
	}
	if out := run("n\n", "store", "archive", "A"); !strings.Contains(out, "[y/N]") || !strings.Contains(out, "nothing done") {
		t.Errorf("store archive on a terminal, answered n: %q", out)
	}
	if archived("A") {
		t.Fatal("a refused archive archived the store")
	}
	if out := run("", "store", "archive", "A", "--yes"); strings.Contains(out, "[y/N]") || !archived("A") {
		t.Errorf("store archive --yes: %q, archived %v", out, archived("A"))
	}
	// No terminal: nobody to ask, so --yes is needed (exit 2 naming it).
	if _, errs, code := e.exec(t, "", "store", "archive", "B"); code != exitUsage || !strings.Contains(errs, "--yes") || archived("B") {
		t.Errorf("store archive from a script without --yes: exit %d %q, archived %v; want %d naming --yes", code, errs, archived("B"), exitUsage)
	}
}

// scripts/demo's binary says which commit it was built from.
func TestSecondPassDemoBinaryVersion(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout")
	}
	cmd := exec.Command("../../scripts/demo", "--build-only")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/demo --build-only: %v\n%s", err, out)
	}
	got, err := exec.Command("../../bin/memfs", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "commit: "+strings.TrimSpace(string(head))) || strings.Contains(string(got), "devel") {
		t.Errorf("scripts/demo's bin/memfs --version:\n%s\nwant commit %s and a version", got, head)
	}
}

// --older-than, --since and the --created-* filters read ages alike, and
// the default prints as it is typed.
func TestSecondPassDurations(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "D")
	e.ok(t, "memory", "create", "D", "--path", "/a.md", "--content", "x")
	for _, age := range []string{"30d", "3d", "12h", "90m", "1d12h", "2w", "0"} {
		if _, errs, code := e.exec(t, "", "version", "prune", "D", "--older-than", age, "--dry-run"); code != 0 {
			t.Errorf("version prune --older-than %s: exit %d, %s", age, code, errs)
		}
		for _, flag := range []string{"--since", "--until"} {
			if _, errs, code := e.exec(t, "", "log", "D", flag, age); code != 0 {
				t.Errorf("log %s %s: exit %d, %s", flag, age, code, errs)
			}
		}
		if _, errs, code := e.exec(t, "", "version", "list", "D", "--created-after", age); code != 0 {
			t.Errorf("version list --created-after %s: exit %d, %s", age, code, errs)
		}
	}
	_, errs, _ := e.exec(t, "", "version", "prune", "D", "--dry-run")
	if !strings.Contains(errs, "older than 30d") || strings.Contains(errs, "720h") {
		t.Errorf("version prune's default age reads %q, want 30d", errs)
	}
	if help := e.ok(t, "version", "prune", "--help"); !strings.Contains(help, "30d") || strings.Contains(help, "720h") {
		t.Errorf("version prune --help does not show the default as 30d:\n%s", help)
	}
	for _, bad := range []string{"soon", "-1d", "3x"} {
		if _, _, code := e.exec(t, "", "version", "prune", "D", "--older-than", bad); code != exitUsage {
			t.Errorf("--older-than %s: exit %d, want %d", bad, code, exitUsage)
		}
	}
}

// log takes git's spellings: -n1, -1, -n 1, --max-count=1; ages in words;
// -n 0 and an empty span print nothing; TIME has seconds.
func TestSecondPassLogLikeGit(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "G")
	for _, p := range []string{"/a.md", "/b.md", "/c.md"} {
		e.ok(t, "memory", "create", "G", "--path", p, "--content", "x")
	}
	lines := func(out string) int { return len(strings.Split(strings.TrimRight(out, "\n"), "\n")) }
	for _, form := range [][]string{{"-n1"}, {"-1"}, {"-n", "1"}, {"--max-count=1"}, {"-n=1"}} {
		out := e.ok(t, append([]string{"log", "G"}, form...)...)
		if lines(out) != 2 || !strings.Contains(out, "/c.md") {
			t.Errorf("log %v: %q, want the header and the newest version", form, out)
		}
	}
	if out := e.ok(t, "log", "G", "-n", "0"); out != "" {
		t.Errorf("log -n 0 printed %q, want nothing", out)
	}
	for _, when := range []string{"yesterday", "2 hours ago", "2.hours.ago", "1 week ago", "today"} {
		if out := e.ok(t, "log", "G", "--since", when); lines(out) != 4 {
			t.Errorf("log --since %q: %q, want all 3 versions", when, out)
		}
	}
	if out := e.ok(t, "log", "G", "--until", "3 days ago"); out != "" {
		t.Errorf("log of an empty span printed %q, want nothing (no header)", out)
	}
	out := e.ok(t, "log", "G", "-1")
	if !regexp.MustCompile(` [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} `).MatchString(out) {
		t.Errorf("log's TIME is not to the second: %q", out)
	}
}

// A pager that cannot run loses nothing: the log is printed as it is, with
// a warning, and the exit status is 0.
func TestSecondPassBadPager(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("needs script(1) for a terminal")
	}
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "P")
	e.ok(t, "memory", "create", "P", "--path", "/kept.md", "--content", "x")
	for _, pager := range []string{"nonexistent-pager", "nonexistent-pager -R", "exec /nonexistent"} {
		cmd := exec.Command(script, "-qec", memfsBin+" log P", "/dev/null")
		cmd.Env = append(os.Environ(), "MEMFS_DB="+e.db, "PAGER="+pager)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "/kept.md") || !strings.Contains(string(out), "pager") {
			t.Errorf("log with PAGER=%q: %v %q, want the log and a warning naming the pager", pager, err, out)
		}
	}
}

// memfs tool refuses invalid UTF-8 as the HTTP API does, says what is
// wrong with a line in JSON terms, and answers as the SDK's local tool.
func TestSecondPassToolMessages(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "T")
	e.ok(t, "memory", "create", "T", "--path", "/projects/p.md", "--content", "x")
	in := strings.Join([]string{
		`{"command":"create","path":"/memories/bin.md","file_text":"bad ` + "\xff" + `"}`,
		`{"command":nol}`,
		`[1]`,
		`{"command":"view","path":5}`,
		`{"command":"insert","path":"/memories/missing.md","insert_line":0,"insert_text":"x"}`,
		`{"command":"str_replace","path":"/memories/projects","old_str":"x","new_str":"y"}`,
		`{"command":"insert","path":"/memories/projects","insert_line":0,"insert_text":"x"}`,
	}, "\n") + "\n"
	out, errs, code := e.exec(t, in, "tool", "T")
	if code != 0 {
		t.Fatalf("memfs tool: exit %d, %s", code, errs)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil || !r.IsError {
			t.Fatalf("result %q: %v, want an error result", line, err)
		}
		got = append(got, r.Content)
	}
	want := []string{
		"not valid UTF-8",
		"unexpected 'o' at character 13",
		"a command is a JSON object such as",
		"`path` must be a string, not a number",
		"Error: The path /memories/missing.md does not exist. Please provide a valid path.",
		"Error: The path /memories/projects is not a file.",
		"Error: The path /memories/projects is not a file.",
	}
	if len(got) != len(want) {
		t.Fatalf("%d results for %d lines:\n%s", len(got), len(want), out)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("line %d: %q, want %q", i+1, got[i], w)
		}
		for _, internal := range []string{"Go value", "memtool.", "literal null", "expecting"} {
			if strings.Contains(got[i], internal) {
				t.Errorf("line %d speaks of Go: %q", i+1, got[i])
			}
		}
	}
	if _, _, code := e.exec(t, "", "memory", "get", "T", "/bin.md"); code != exitNotFound {
		t.Errorf("invalid UTF-8 through memfs tool was stored (memory get exit %d)", code)
	}
}

// Flag mistakes name the flag as it is typed.
func TestSecondPassFlagErrors(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "F")
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--verbose", "store", "list"}, "unknown flag --verbose"},
		{[]string{"store", "list", "--verbose"}, "unknown flag --verbose"},
		{[]string{"store", "create", "--name"}, "--name needs a value"},
		{[]string{"log", "F", "-n", "x"}, `invalid value "x" for flag -n`},
	} {
		_, errs, code := e.exec(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.says) || strings.Contains(errs, " -verbose") {
			t.Errorf("memfs %v: exit %d, %q; want %d saying %q", tc.args, code, errs, exitUsage, tc.says)
		}
	}
	if _, errs, _ := e.exec(t, "{\"type\":nul}\n", "import"); !strings.Contains(errs, "at character") || strings.Contains(errs, "literal null") {
		t.Errorf("import of a bad line: %q, want the character named in JSON terms", errs)
	}
}

// Every size limit of memfs serve answers 413 invalid_request_error, the
// hosted API's type; a path that is no route points at the routes' page.
func TestSecondPassServeErrorTypes(t *testing.T) {
	e := newE2EEnv(t)
	key := e.apiKey(t)
	storeID, _ := e.createStore(t, "Limits")
	srv := e.startServe(t)
	call := func(method, path, body string) (int, map[string]any) {
		req, err := http.NewRequest(method, srv.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-api-key", key)
		req.Header.Set("content-type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Error map[string]any `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out.Error
	}
	for name, req := range map[string][2]string{
		"memory over its limit": {"/v1/memory_stores/" + storeID + "/memories", `{"path":"/big.md","content":"` + strings.Repeat("x", 102401) + `"}`},
		"body over 256 KiB":     {"/v1/memory_stores", `{"name":"n","description":"` + strings.Repeat("x", 300<<10) + `"}`},
	} {
		code, errObj := call("POST", req[0], req[1])
		if code != http.StatusRequestEntityTooLarge || errObj["type"] != "invalid_request_error" {
			t.Errorf("%s: %d %v, want 413 invalid_request_error", name, code, errObj)
		}
	}
	code, errObj := call("GET", "/v1/nowhere", "")
	if msg, _ := errObj["message"].(string); code != http.StatusNotFound || !strings.Contains(msg, "docs/http-api.md") || strings.Contains(msg, "README") {
		t.Errorf("GET /v1/nowhere: %d %v, want 404 pointing at docs/http-api.md", code, errObj)
	}
}

// Completion offers store names where a command takes a STORE (the
// database of --db or MEMFS_DB), and lists --help once.
func TestSecondPassCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the script in")
	}
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "Demo Memory")
	e.ok(t, "store", "create", "--name", "Notes")
	script := filepath.Join(t.TempDir(), "memfs.bash")
	os.WriteFile(script, []byte(e.ok(t, "completion", "bash")), 0o644)
	complete := func(env []string, words ...string) []string {
		prog := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _memfs; printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, append([]string{"-c", prog, "x", script}, words...)...)
		cmd.Env = append(append(os.Environ(), "PATH="+filepath.Dir(memfsBin)+":"+os.Getenv("PATH")), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("completing %q: %v %s", words, err, out)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	withDB := []string{"MEMFS_DB=" + e.db}
	for _, tc := range []struct {
		env   []string
		words []string
		want  string
	}{
		{withDB, []string{"memfs", "log", ""}, `Demo\ Memory,Notes`},
		{withDB, []string{"memfs", "log", "N"}, "Notes"},
		{nil, []string{"memfs", "--db", e.db, "memory", "list", "De"}, `Demo\ Memory`},
		{withDB, []string{"memfs", "store", "get", ""}, `Demo\ Memory,Notes`},
	} {
		if got := strings.Join(complete(tc.env, tc.words...), ","); got != tc.want {
			t.Errorf("completing %q: %q, want %q", tc.words, got, tc.want)
		}
	}
	helps := 0
	for _, w := range complete(withDB, "memfs", "") {
		if w == "--help" {
			helps++
		}
	}
	if helps != 1 {
		t.Errorf("the top-level candidates hold --help %d times, want once", helps)
	}
	// The helper command is not offered.
	if got := strings.Join(complete(withDB, "memfs", "__"), ","); got != "" {
		t.Errorf("completing memfs __: %q, want nothing", got)
	}
}

// session list is newest first, as the API lists; a mount's session
// killed with kill -9 is ended once its lease lapses.
func TestSecondPassSessions(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts need root here")
	}
	env := newE2EEnv(t)
	env.createStore(t, "S")
	first := strings.TrimSpace(env.cli(t, "session", "create", "--store", "S"))
	second := strings.TrimSpace(env.cli(t, "session", "create", "--store", "S"))
	mnt := mountDir(t)
	d := env.startMount(t, mnt, "--store", "S")
	list := func() []versions.Session { return listAll[versions.Session](t, env, "session", "list") }
	got := list()
	if len(got) != 3 || got[1].ID != second || got[2].ID != first {
		t.Fatalf("session list: %+v, want the mount's, then %s, then %s (newest first)", got, second, first)
	}
	mounted := got[0]
	if mounted.EndedAt != nil {
		t.Fatalf("the live mount's session is ended: %+v", mounted)
	}
	if out := env.cli(t, "session", "list"); strings.Index(out, second) > strings.Index(out, first) {
		t.Errorf("session list in text is not newest first:\n%s", out)
	}
	d.kill9(t)
	syscall.Unmount(mnt, syscall.MNT_DETACH)
	if _, ok := waitFor(func() bool {
		for _, s := range list() {
			if s.ID == mounted.ID {
				return s.EndedAt != nil
			}
		}
		return false
	}, time.Now(), 5*versions.LeaseTTL+5*time.Second); !ok {
		t.Errorf("the session of a mount killed with SIGKILL is still open after its lease lapsed")
	}
}

// A database this user cannot write is read, as git and restic read a
// repository they cannot write; writes fail with exit 6 saying why.
func TestSecondPassReadOnlyDatabase(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a read-only bind mount and to become another user")
	}
	dir, err := os.MkdirTemp("/tmp", "memfs-rodb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o777)
	db := filepath.Join(src, "memfs.db")
	e := &cliEnv{db: db}
	e.ok(t, "store", "create", "--name", "R")
	e.ok(t, "memory", "create", "R", "--path", "/a.md", "--content", "hello")
	e.ok(t, "memory", "update", "R", "/a.md", "--content", "hello again")

	check := func(t *testing.T, run func(args ...string) (string, string, int)) {
		t.Helper()
		for _, args := range [][]string{{"store", "list"}, {"memory", "get", "R", "/a.md"}, {"log", "R"}, {"diff", "R", "/a.md"}, {"session", "list"}} {
			if out, errs, code := run(args...); code != 0 || out == "" {
				t.Errorf("memfs %v on a read-only database: exit %d, %q %q", args, code, out, errs)
			}
		}
		_, errs, code := run("memory", "create", "R", "--path", "/b.md", "--content", "x")
		if code != exitReadOnly || !strings.Contains(errs, "read-only to this user") {
			t.Errorf("a write to a read-only database: exit %d, %q; want %d saying why", code, errs, exitReadOnly)
		}
	}
	t.Run("ReadOnlyMount", func(t *testing.T) {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o755)
		if err := syscall.Mount(src, ro, "", syscall.MS_BIND, ""); err != nil {
			t.Skipf("bind mount: %v", err)
		}
		t.Cleanup(func() { syscall.Unmount(ro, syscall.MNT_DETACH) })
		if err := syscall.Mount("", ro, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			t.Fatalf("remount read-only: %v", err)
		}
		ro2 := &cliEnv{db: filepath.Join(ro, "memfs.db")}
		check(t, func(args ...string) (string, string, int) { return ro2.exec(t, "", args...) })
	})
	t.Run("ReadOnlyFileAsAnotherUser", func(t *testing.T) {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("needs setpriv (util-linux)")
		}
		if err := os.Chmod(db, 0o444); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(db, 0o600) })
		bin := filepath.Join(dir, "memfs")
		data, _ := os.ReadFile(memfsBin)
		os.WriteFile(bin, data, 0o755)
		check(t, func(args ...string) (string, string, int) {
			cmd := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin, "--db", db}, args...)...)
			cmd.Env = []string{"HOME=/nonexistent", "PATH=/usr/bin:/bin"}
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			return out.String(), errb.String(), cmd.ProcessState.ExitCode()
		})
	})
}

// memfs run from a directory that holds the database refuses, saying
// why, rather than show the command that directory empty.
func TestSecondPassRunInDatabaseDir(t *testing.T) {
	proj := filepath.Join(t.TempDir(), "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(proj, "agent.py"), []byte("print('hi')\n"), 0o644)
	run := func(args ...string) (string, int) {
		cmd := exec.Command(memfsBin, args...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "MEMFS_DB=./memfs.db")
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := run("store", "create", "--name", "S"); code != 0 {
		t.Fatalf("store create: %d %s", code, out)
	}
	out, code := run("run", "--store", "S", "--", "python3", "agent.py")
	if code != exitInvalid || !strings.Contains(out, "working directory "+proj) || !strings.Contains(out, "directory of its own") {
		t.Errorf("memfs run in the database's directory: exit %d, %q; want %d naming the cause and the fix", code, out, exitInvalid)
	}
	if got := listAll[versions.Session](t, &e2eEnv{dbPath: filepath.Join(proj, "memfs.db")}, "session", "list"); len(got) != 0 {
		t.Errorf("the refused run made %d sessions", len(got))
	}
}
