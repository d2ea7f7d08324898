package main

// A newcomer's first hour, the rest of the third pass: a store's limits for
// scripts, hints for likely typos, log lines, run's sandbox, completion and
// the cosmetic items. Each test drives the built binary.

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
)

// store get --format json carries the limits, what the store holds and its
// guard, as the text does; store update changes the limits, never below
// what the store holds.
func TestNewcomer3StoreLimits(t *testing.T) {
	e := newE2EEnv(t)
	e.cli(t, "store", "create", "--name", "Notes", "--max-memories", "5", "--max-history-bytes", "0")
	e.cli(t, "memory", "create", "Notes", "--path", "/a.md", "--content", strings.Repeat("a", 300))
	e.cli(t, "memory", "create", "Notes", "--path", "/b.md", "--content", "b")
	e.cli(t, "memory", "create", "Notes", "--path", "/c.md", "--content", "c")

	var got map[string]any
	e.cliJSON(t, &got, "store", "get", "Notes")
	text := e.cli(t, "store", "get", "Notes")
	for key, want := range map[string]any{
		"type": "memory_store", "name": "Notes", "max_memories": 5.0, "max_memory_bytes": 102400.0,
		"max_directories": 2000.0, "max_history_bytes": nil, "memory_count": 3.0, "guard": "refuse",
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("store get --format json: %s = %v (present %v), want %v\n%v", key, v, ok, want, got)
		}
	}
	hb, ok := got["history_bytes"].(float64)
	if !ok || hb < 302 {
		t.Errorf("store get --format json: history_bytes = %v, want at least the 302 bytes saved", got["history_bytes"])
	}
	for label, want := range map[string]string{"history bytes:": jsonNumber(hb) + " (no quota)", "memories:": "3", "max memories:": "5", "guard:": "refuse"} {
		if got := fieldLine(text, label); got != want {
			t.Errorf("store get shows %s %q, want %q as the JSON says\n%s", label, got, want, text)
		}
	}

	// Below what the store holds: one line, exit 5, nothing changed.
	for _, c := range []struct {
		flag, value, want string
	}{
		{"--max-memories", "2", "holds 3 memories"},
		{"--max-memory-bytes", "299", "memory of 300 bytes"},
	} {
		_, errs, code := e.run(t, "store", "update", "Notes", c.flag, c.value)
		if code != exitInvalid || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("store update %s %s: exit %d %q, want %d and one line saying %q", c.flag, c.value, code, errs, exitInvalid, c.want)
		}
	}
	if _, errs, code := e.run(t, "store", "update", "Notes", "--max-memories", "0"); code != exitUsage || !strings.Contains(errs, "at least 1") {
		t.Errorf("store update --max-memories 0: exit %d %q, want %d", code, errs, exitUsage)
	}

	e.cliJSON(t, &got, "store", "update", "Notes", "--max-memories", "3", "--max-memory-bytes", "300")
	if got["max_memories"] != 3.0 || got["max_memory_bytes"] != 300.0 {
		t.Errorf("store update printed limits %v and %v, want 3 and 300", got["max_memories"], got["max_memory_bytes"])
	}
	// The new limits hold.
	if _, errs, code := e.run(t, "memory", "create", "Notes", "--path", "/d.md", "--content", "d"); code != exitInvalid || !strings.Contains(errs, "maximum of 3") {
		t.Errorf("a fourth memory past --max-memories 3: exit %d %q, want %d", code, errs, exitInvalid)
	}
	if _, errs, code := e.run(t, "memory", "update", "Notes", "/b.md", "--content", strings.Repeat("b", 301)); code != exitInvalid || !strings.Contains(errs, "limit of 300") {
		t.Errorf("a memory past --max-memory-bytes 300: exit %d %q, want %d", code, errs, exitInvalid)
	}
	e.cli(t, "store", "update", "Notes", "--max-memories", "10")
	e.cli(t, "memory", "create", "Notes", "--path", "/d.md", "--content", "d")
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// fieldLine is the value store get and session get show on the line that
// begins with label.
func fieldLine(text, label string) string {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, label); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// Likely typos get a hint: a path without its slash says so in every
// command, a misspelt access mode names the right one, and a store named
// by its slug or in another case names the store meant.
func TestNewcomer3TypoHints(t *testing.T) {
	e := newE2EEnv(t)
	e.createStore(t, "My Notes")
	e.cli(t, "memory", "create", "My Notes", "--path", "/todo.md", "--content", "1")
	e.cli(t, "memory", "update", "My Notes", "/todo.md", "--content", "2")
	for _, args := range [][]string{
		{"memory", "create", "My Notes", "--path", "todo.md", "--content", "x"},
		{"memory", "get", "My Notes", "todo.md"},
		{"memory", "get", "My Notes", "todo.md~1"},
		{"memory", "update", "My Notes", "todo.md", "--content", "x"},
		{"memory", "delete", "My Notes", "todo.md"},
		{"diff", "My Notes", "todo.md"},
		{"diff", "My Notes", "/todo.md~1", "todo.md"},
		{"log", "My Notes", "todo.md"},
		{"version", "get", "My Notes", "todo.md"},
		{"version", "list", "My Notes", "--memory", "todo.md"},
		{"restore", "My Notes", "todo.md~1"},
	} {
		_, errs, code := e.run(t, args...)
		if code != exitInvalid || !strings.Contains(errs, "must start with /") {
			t.Errorf("memfs %s: exit %d %q, want %d saying the path must start with /", strings.Join(args, " "), code, errs, exitInvalid)
		}
	}
	if got := e.cli(t, "memory", "get", "My Notes", "/todo.md"); got != "2" {
		t.Errorf("the refused commands changed /todo.md: %q", got)
	}

	for _, spec := range []string{"My Notes:readonly", "My Notes:read-only", "My Notes:RO"} {
		_, errs, code := e.run(t, "session", "create", "--store", spec)
		if code != exitUsage || !strings.Contains(errs, ":read_only") {
			t.Errorf("session create --store %q: exit %d %q, want %d naming :read_only", spec, code, errs, exitUsage)
		}
	}
	if _, errs, code := e.run(t, "session", "create", "--store", "My Notes:rw"); code != exitUsage || !strings.Contains(errs, ":read_write") {
		t.Errorf("session create --store My Notes:rw: exit %d %q, want %d naming :read_write", code, errs, exitUsage)
	}
	if _, errs, code := e.run(t, "session", "create", "--store", "Other:readonly"); code != exitNotFound || strings.Contains(errs, ":read_only") {
		t.Errorf("session create --store Other:readonly (no such store): exit %d %q, want %d without an access hint", code, errs, exitNotFound)
	}

	for _, ref := range []string{"my-notes", "my notes", "MY NOTES"} {
		_, errs, code := e.run(t, "store", "get", ref)
		if code != exitNotFound || !strings.Contains(errs, `did you mean "My Notes"`) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("store get %q: exit %d %q, want %d and one line naming \"My Notes\"", ref, code, errs, exitNotFound)
		}
	}
	if _, errs, _ := e.run(t, "store", "get", "Shopping"); strings.Contains(errs, "did you mean") {
		t.Errorf("store get of a name like no store's: %q, want no suggestion", errs)
	}
}

// A daemon's log line shows the command a refusal's reason names as a
// person reads it ('memfs version prune'), not as \x60memfs version
// prune\x60; anything else a shell would act on stays escaped.
func TestNewcomer3LogLinesReadable(t *testing.T) {
	e := newE2EEnv(t)
	id := strings.TrimSpace(e.cli(t, "store", "create", "--name", "Tight", "--max-history-bytes", "2000"))
	mnt := mountDir(t)
	d := e.startMount(t, mnt, "--store", id)
	err := os.WriteFile(filepath.Join(mnt, "tight", "big.md"), []byte(strings.Repeat("x", 4000)), 0o644)
	if !errors.Is(err, syscall.EDQUOT) {
		t.Fatalf("a 4000-byte file in a store with a 2000-byte quota: %v, want EDQUOT", err)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(d.stderr.String(), "EDQUOT") && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	log := d.stderr.String()
	if !strings.Contains(log, "EDQUOT") || !strings.Contains(log, "run 'memfs version prune'") || strings.Contains(log, `\x60`) {
		t.Errorf("the EDQUOT line should name 'memfs version prune' without \\x60:\n%s", log)
	}

	// serve on a database without a key says how to make one, backticks kept.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.Command(memfsBin, "serve", "--listen", addr)
	srv.Env = e.environ()
	var out syncBuffer
	srv.Stderr = &out
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "serving") && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
	if s := out.String(); !strings.Contains(s, "`memfs apikey create --name NAME`") || strings.Contains(s, `\x60`) {
		t.Errorf("serve without a key:\n%s\nwant `memfs apikey create --name NAME` as written", s)
	}

	// A value whose backticks hold anything but a plain memfs command
	// keeps them escaped, and a log of such values, sourced, runs nothing.
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: logSafe}))
	l.Info("refused", "reason", "run `memfs version prune` or `memfs x;touch "+marker+"` or `touch "+marker+"`", "path", "/`memfs $(touch "+marker+")` x")
	if got := buf.String(); !strings.Contains(got, `run 'memfs version prune' or \\x60memfs x;touch`) {
		t.Errorf("logged: %s", got)
	}
	file := filepath.Join(dir, "log")
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	exec.Command("sh", "-c", ". "+file).Run()
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("sourcing the log ran a command:\n%s", buf.String())
	}
}

// store list and session get keep their columns aligned on a terminal for
// names in scripts whose characters take two columns; counts read in
// words; a CJK name's directory is as docs/cli.md says.
func TestNewcomer3WideNamesAndPlurals(t *testing.T) {
	e := newE2EEnv(t)
	names := []string{"日本語のメモ", "Notes", "한국어", "中文笔记"}
	for _, n := range names {
		e.createStore(t, n)
	}
	// Columns as a terminal shows them: Han, kana and Hangul take two.
	cols := func(s string) int {
		n := 0
		for _, r := range s {
			n++
			if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
				n++
			}
		}
		return n
	}
	list := e.cli(t, "store", "list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != len(names)+1 {
		t.Fatalf("store list:\n%s", list)
	}
	createdAt := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:`)
	at := -1
	for _, line := range lines[1:] {
		if !createdAt.MatchString(line) {
			t.Fatalf("no time in %q", line)
		}
		i := createdAt.FindStringIndex(line)[0] // the CREATED column
		if c := cols(line[:i]); at < 0 {
			at = c
		} else if c != at {
			t.Errorf("store list: CREATED starts at column %d and %d:\n%s", at, c, list)
		}
	}
	if want := cols(lines[0][:strings.Index(lines[0], "CREATED")]); at != want {
		t.Errorf("store list: the times start at column %d, the CREATED header at %d:\n%s", at, want, list)
	}

	// The slugs docs/cli.md documents: kanji read as Chinese pinyin.
	var sess struct {
		Resources []struct {
			Name      string `json:"name"`
			MountPath string `json:"mount_path"`
		} `json:"resources"`
	}
	e.cliJSON(t, &sess, "session", "create", "--store", "日本語のメモ", "--store", "한국어")
	if len(sess.Resources) != 2 || sess.Resources[0].MountPath != "/mnt/memory/ri-ben-yu-nomemo" || sess.Resources[1].MountPath != "/mnt/memory/hangugeo" {
		t.Errorf("mount paths of 日本語のメモ and 한국어: %+v, want ri-ben-yu-nomemo and hangugeo as docs/cli.md says", sess.Resources)
	}

	e.cli(t, "memory", "create", "Notes", "--path", "/a.md", "--content", "1")
	e.cli(t, "memory", "update", "Notes", "/a.md", "--content", "2")
	_, errs, code := e.run(t, "version", "prune", "Notes", "--older-than", "0s", "--keep-last", "1", "--yes")
	if code != 0 || !strings.Contains(errs, "pruned 1 version older") {
		t.Errorf("version prune of one version: exit %d %q, want \"pruned 1 version\"", code, errs)
	}
	export := e.cli(t, "export", "Notes")
	imp := exec.Command(memfsBin, "import")
	imp.Env = newE2EEnv(t).environ()
	imp.Stdin = strings.NewReader(export)
	out, err := imp.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "1 memory, 0 directories, 1 version\n") {
		t.Errorf("import of one memory with one version: %v %q, want \"1 memory, 0 directories, 1 version\"", err, out)
	}
}

// memfs run does not warn about a database directory others may only read
// (the README's own layout: mkdir -p, then a 0600 database in it), and the
// command's /tmp is its own and empty: none of the host's files, and
// nothing left behind for the next run.
func TestNewcomer3RunPrivateTmpNoFalseWarning(t *testing.T) {
	e := newRunEnv(t)
	if err := os.MkdirAll(filepath.Dir(e.db), 0o755); err != nil {
		t.Fatal(err)
	}
	e.stores(t)
	for _, f := range []string{e.db, e.db + "-wal", e.db + "-shm"} {
		if fi, err := os.Stat(f); err == nil && fi.Mode().Perm()&0o077 != 0 {
			t.Fatalf("%s is %04o: memfs makes its files 0600", f, fi.Mode().Perm())
		}
	}
	marker, err := os.CreateTemp("/tmp", "memfs-host-marker-")
	if err != nil {
		t.Fatal(err)
	}
	marker.Close()
	t.Cleanup(func() { os.Remove(marker.Name()) })

	script := `ls -A /tmp; echo left > /tmp/left-behind; test -e ` + marker.Name() + ` && echo SEES-HOST-TMP; echo done`
	out, errs, code := e.memfs(t, "run", "--store", "Reference:read_only", "--mount-root", e.root, "--", "sh", "-c", script)
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("memfs run exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if strings.Contains(errs, "readable by every user") || strings.Contains(errs, "writable by every user") {
		t.Errorf("memfs run warned about a 0755 directory holding 0600 files:\n%s", errs)
	}
	if strings.Contains(out, "SEES-HOST-TMP") || strings.Contains(out, filepath.Base(marker.Name())) {
		t.Errorf("the command's /tmp shows the host's:\n%s", out)
	}
	// What memfs puts there: the prompt's directory, the home and what
	// was bound in at its own path (the mount root's top directory).
	allowed := map[string]bool{"memfs": true, "home": true}
	for _, d := range []string{e.root, e.dir} {
		if rel, err := filepath.Rel("/tmp", d); err == nil && !strings.HasPrefix(rel, "..") {
			allowed[strings.Split(rel, "/")[0]] = true
		}
	}
	for _, name := range strings.Fields(strings.TrimSuffix(out, "done\n")) {
		if !allowed[name] && !strings.HasPrefix(name, "session") {
			t.Errorf("the command's /tmp holds %q, which memfs did not put there:\n%s", name, out)
		}
	}
	if _, err := os.Stat("/tmp/left-behind"); err == nil {
		os.Remove("/tmp/left-behind")
		t.Errorf("a file the command wrote in its /tmp reached the host's")
	}
	out, errs, code = e.memfs(t, "run", "--store", "Reference:read_only", "--mount-root", e.root, "--", "sh", "-c", "test -e /tmp/left-behind && echo LEFT; echo done")
	if code != 0 || strings.Contains(out, "LEFT") {
		t.Errorf("the next run's /tmp holds what the last left (exit %d):\n%s\n%s", code, out, errs)
	}

	// A directory every user may write is worth a warning.
	if err := os.Chmod(filepath.Dir(e.db), 0o777); err != nil {
		t.Fatal(err)
	}
	_, errs, _ = e.memfs(t, "run", "--store", "Reference:read_only", "--mount-root", e.root, "--", "true")
	if !strings.Contains(errs, "writable by every user") {
		t.Errorf("memfs run with the database in a 0777 directory did not warn:\n%s", errs)
	}
}

// Completion offers a store's memory paths where a command takes one
// (memfs log Notes /t<TAB>), a directory a level at a time, and never the
// host's files there.
func TestNewcomer3CompletePaths(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the completion script in")
	}
	e := newE2EEnv(t)
	e.createStore(t, "My Notes")
	for _, p := range []string{"/todo.md", "/team/a.md", "/team/b.md", "/other.md", "/with space.md"} {
		e.cli(t, "memory", "create", "My Notes", "--path", p, "--content", "x")
	}
	script := filepath.Join(t.TempDir(), "memfs.bash")
	if err := os.WriteFile(script, []byte(e.cli(t, "completion", "bash")), 0o644); err != nil {
		t.Fatal(err)
	}
	// A host directory with names the store's could be confused with.
	host := t.TempDir()
	os.WriteFile(filepath.Join(host, "todo-host.txt"), nil, 0o644)
	complete := func(words ...string) []string {
		t.Helper()
		prog := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _memfs; printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, append([]string{"-c", prog, "x", script}, words...)...)
		cmd.Dir = host
		cmd.Env = append(e.environ(), "PATH="+filepath.Dir(memfsBin)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("completing %q: %v\n%s", words, err, out)
		}
		return strings.Fields(strings.TrimSpace(string(out)))
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"memfs", "log", `My\ Notes`, "/t"}, "/team/ /todo.md"},
		{[]string{"memfs", "log", `"My Notes"`, "/team/"}, "/team/a.md /team/b.md"},
		{[]string{"memfs", "--db", e.dbPath, "memory", "get", `'My Notes'`, "/o"}, "/other.md"},
		{[]string{"memfs", "diff", `My\ Notes`, "/w"}, `/with\ space.md`},
		{[]string{"memfs", "log", `My\ Notes`, "t"}, "/team/ /todo.md"},
		{[]string{"memfs", "log", `My\ Notes`, "/x"}, ""},
		{[]string{"memfs", "log", "Nothing", "/t"}, ""},
	} {
		if got := strings.Join(complete(tc.words...), " "); got != tc.want {
			t.Errorf("completing %q: %q, want %q", tc.words, got, tc.want)
		}
	}
	// Before a path, the first argument completes to a store's name.
	if got := complete("memfs", "log", "My"); len(got) != 2 || got[0] != `My\` || got[1] != "Notes" {
		t.Errorf("completing a store name: %q, want My\\ Notes", got)
	}
}

// A running mount applies a store's new limits at once: a write past a
// lowered --max-memory-bytes is refused at write(), and one a raised
// limit admits is saved.
func TestNewcomer3MountSeesNewLimits(t *testing.T) {
	e := newE2EEnv(t)
	id := strings.TrimSpace(e.cli(t, "store", "create", "--name", "Limits"))
	mnt := mountDir(t)
	e.startMount(t, mnt, "--store", id)
	file := filepath.Join(mnt, "limits", "a.md")
	if err := os.WriteFile(file, []byte("small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.cli(t, "store", "update", id, "--max-memory-bytes", "100")
	big := []byte(strings.Repeat("x", 150))
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err = os.WriteFile(file, big, 0o644); errors.Is(err, syscall.EFBIG) {
			break
		}
	}
	if !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("a 150-byte write after store update --max-memory-bytes 100: %v, want EFBIG", err)
	}
	e.cli(t, "store", "update", id, "--max-memory-bytes", "1000")
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err = os.WriteFile(file, big, 0o644); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("a 150-byte write after the limit was raised to 1000: %v", err)
	}
	if got := e.cli(t, "memory", "get", id, "/a.md"); got != string(big) {
		t.Errorf("/a.md holds %d bytes, want the 150 written", len(got))
	}
}
