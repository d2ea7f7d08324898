package main

// What a new user meets first: mountpoint mistakes, page limits, names
// attached as typed, help, a mistyped database path, history by path.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/versions"
)

func TestMountRefusesBadMountpoint(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts need root here")
	}
	env := newE2EEnv(t)
	storeID, _ := env.createStore(t, "Mnt")
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "live")
	if err := os.Mkdir(live, 0o755); err != nil {
		t.Fatal(err)
	}
	env.startMount(t, live, "--store", storeID)
	sessionsBefore := len(listAll[map[string]any](t, env, "session", "list"))

	for _, tc := range []struct {
		name, mnt string
		code      int
		says      string
	}{
		{"Missing", filepath.Join(dir, "nope"), exitUsage, "does not exist"},
		{"NotADirectory", file, exitUsage, "not a directory"},
		{"LiveMount", live, exitConflict, "already a live FUSE mount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, form := range [][]string{{"--store", storeID}, {"--session", "sesn_none"}} {
				_, errs, code := env.run(t, append(append([]string{"mount"}, form...), tc.mnt)...)
				if code != tc.code || !strings.Contains(errs, tc.says) {
					t.Errorf("mount %v %s: exit %d, stderr %q; want %d saying %q", form, tc.mnt, code, errs, tc.code, tc.says)
				}
			}
		})
	}
	// The --store form checks the mountpoint before it creates a session.
	if got := len(listAll[map[string]any](t, env, "session", "list")); got != sessionsBefore {
		t.Errorf("refused mounts left %d sessions behind", got-sessionsBefore)
	}
}

// A mount as a user other than root that cannot work says what to do, not
// go-fuse's "fusermount exited with code 256".
func TestMountWithoutFuseAccess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to become another user and to hide /dev/fuse in a mount namespace")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	// A directory the other user can reach: t.TempDir is root's alone.
	dir, err := os.MkdirTemp("/tmp", "memfs-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	bin := filepath.Join(dir, "memfs")
	data, err := os.ReadFile(memfsBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o777)
	db := filepath.Join(dir, "db", "memfs.db")
	e := &cliEnv{db: db}
	e.ok(t, "store", "create", "--name", "N")
	os.Chmod(filepath.Dir(db), 0o777)
	os.Chmod(db, 0o666)
	emptyPath := filepath.Join(dir, "nopath")
	os.Mkdir(emptyPath, 0o755)

	asNobody := func(t *testing.T, shell, path string) (string, int) {
		t.Helper()
		cmd := exec.Command("unshare", "-m", "sh", "-c", shell+`; exec "$0" --reuid=65534 --regid=65534 --clear-groups "$@"`,
			setpriv, bin, "--db", db, "mount", "--store", "N", mnt)
		cmd.Env = []string{"PATH=" + path}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	t.Run("NoFusermount", func(t *testing.T) {
		// A FUSE device the user may open, so that only fusermount3 is
		// missing; unshare and mount are found before PATH is narrowed.
		open := filepath.Join(dir, "fuse-open")
		if err := exec.Command("mknod", "-m", "0666", open, "c", "10", "229").Run(); err != nil {
			t.Skipf("mknod: %v", err)
		}
		os.Chmod(open, 0o666)
		out, code := asNobody(t, "mount --bind "+open+" /dev/fuse && export PATH="+emptyPath, os.Getenv("PATH"))
		if code != exitNotFound || !strings.Contains(out, "fusermount3") || !strings.Contains(out, "apt-get install fuse3") {
			t.Errorf("exit %d, output %q: want a refusal naming fusermount3 and how to install it", code, out)
		}
	})
	t.Run("NoDeviceAccess", func(t *testing.T) {
		private := filepath.Join(dir, "fuse-private")
		if err := os.WriteFile(private, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		out, code := asNobody(t, "mount --bind "+private+" /dev/fuse", os.Getenv("PATH"))
		if code != exitReadOnly || !strings.Contains(out, "/dev/fuse") || !strings.Contains(out, "as root") {
			t.Errorf("exit %d, output %q: want a refusal naming /dev/fuse and what to do", code, out)
		}
	})
	if isMounted(t, mnt) {
		syscall.Unmount(mnt, syscall.MNT_DETACH)
		t.Errorf("%s was mounted", mnt)
	}
}

func TestCLIPageLimits(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "L")
	for _, args := range [][]string{
		{"store", "list", "--limit", "1001"},
		{"session", "list", "--limit", "5000"},
		{"memory", "list", "L", "--limit", "1001"},
		{"memory", "list", "L", "--view", "full", "--limit", "21"},
		{"version", "list", "L", "--view", "full", "--limit", "100"},
	} {
		err := e.fails(t, exitInvalid, "invalid_request_error", args...)
		if msg, _ := err["message"].(string); !strings.Contains(msg, "--limit") {
			t.Errorf("memfs %q: message %q does not name --limit", args, msg)
		}
	}
	e.ok(t, "memory", "list", "L", "--limit", "1000")
	e.ok(t, "memory", "list", "L", "--view", "full", "--limit", "20")
}

func TestCLIHelp(t *testing.T) {
	e := newCLIEnv(t)
	out := e.ok(t, "help", "store", "create")
	if !strings.Contains(out, "memfs store create - ") || !strings.Contains(out, "--name") {
		t.Errorf("memfs help store create printed another command's help:\n%s", out)
	}
	for _, args := range [][]string{{"mount", "--help"}, {"memory", "list", "--help"}, {"store", "list", "--help"}, {"version", "prune", "--help"}} {
		out := e.ok(t, args...)
		for _, line := range strings.Split(out, "\n") {
			if strings.Count(line, "default") > 1 || strings.Contains(line, "(default: false)") || strings.Contains(line, "(default: 0)") || strings.Contains(line, "(default: -1)") {
				t.Errorf("memfs %q: a line says its default twice or says a zero default: %q", args, line)
			}
		}
	}
	for _, args := range [][]string{{"store", "list", "--help"}, {"session", "list", "--help"}} {
		if out := e.ok(t, args...); strings.Contains(out, "--view") {
			t.Errorf("memfs %q mentions --view, which it lacks:\n%s", args, out)
		}
	}
	for _, out := range []string{e.ok(t, "--help"), e.ok(t, "mount", "--help")} {
		if strings.Contains(out, "(F1") || strings.Contains(out, "F13") || strings.Contains(out, "(X") {
			t.Errorf("help carries a rule number:\n%s", out)
		}
	}
}

func TestCLIVersionFlag(t *testing.T) {
	e := newCLIEnv(t)
	out := e.ok(t, "--version")
	for _, want := range []string{"memfs ", "commit:", "go:     go1.", "sqlite: 3."} {
		if !strings.Contains(out, want) {
			t.Errorf("memfs --version lacks %q:\n%s", want, out)
		}
	}
}

func TestCLICompletion(t *testing.T) {
	e := newCLIEnv(t)
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if out := e.ok(t, "completion", sh); !strings.Contains(out, "memfs") {
			t.Errorf("completion %s printed %q", sh, out)
		}
	}
	e.fails(t, exitUsage, "invalid_request_error", "completion", "tcsh")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the script in")
	}
	script := filepath.Join(t.TempDir(), "memfs.bash")
	os.WriteFile(script, []byte(e.ok(t, "completion", "bash")), 0o644)
	for _, tc := range []struct{ line, want string }{
		{"memfs st", "store"},
		{"memfs store cr", "create"},
		{"memfs store create --na", "--name"},
		{"memfs --db x.db version pr", "prune"},
		{"memfs version prune Notes --dr", "--dry-run"},
	} {
		words := strings.Fields(tc.line)
		prog := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _memfs; printf '%s\n' "${COMPREPLY[@]}"`
		out, err := exec.Command(bash, append([]string{"-c", prog, "x", script}, words...)...).CombinedOutput()
		if err != nil || !strings.Contains("\n"+string(out), "\n"+tc.want+"\n") {
			t.Errorf("completing %q: %q (%v), want %q among the candidates", tc.line, out, err, tc.want)
		}
	}
	// Where zsh and fish are installed, their scripts load and complete
	// (zsh's compgen leaves the prefix match to compadd: the words after
	// "store" are offered, not the top level's).
	for _, tc := range []struct{ sh, prog string }{
		{"zsh", `source <(memfs completion zsh) && COMP_WORDS=(memfs store cr) && COMP_CWORD=2 && _memfs && print -rl -- $COMPREPLY | grep -x create`},
		{"fish", `memfs completion fish | source; complete -C "memfs store cr"`},
	} {
		path, err := exec.LookPath(tc.sh)
		if err != nil {
			t.Logf("no %s: its completion is not tried", tc.sh)
			continue
		}
		cmd := exec.Command(path, "-c", tc.prog)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(memfsBin)+":"+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "create" {
			t.Errorf("%s completing \"memfs store cr\": %v %q, want create", tc.sh, err, out)
		}
	}
}

// Names are attached as they were given: surrounding spaces and a ":" in
// the name are part of it.
func TestCLIAttachOddNames(t *testing.T) {
	e := newCLIEnv(t)
	padded := strings.TrimSpace(e.ok(t, "store", "create", "--name", " Padded "))
	colon := strings.TrimSpace(e.ok(t, "store", "create", "--name", "team:notes"))
	modeName := strings.TrimSpace(e.ok(t, "store", "create", "--name", "odd:read_only"))
	for _, tc := range []struct {
		spec, id, access string
	}{
		{" Padded ", padded, "read_write"},
		{" Padded :read_only", padded, "read_only"},
		{"team:notes", colon, "read_write"},
		{"team:notes:read_only", colon, "read_only"},
		{"odd:read_only", modeName, "read_write"},
		{"odd:read_only:read_only", modeName, "read_only"},
	} {
		s := e.obj(t, "session", "create", "--store", tc.spec)
		res, _ := s["resources"].([]any)
		if len(res) != 1 {
			t.Fatalf("session create --store %q: %v", tc.spec, s)
		}
		r := res[0].(map[string]any)
		if r["memory_store_id"] != tc.id || r["access"] != tc.access {
			t.Errorf("--store %q attached %v %v, want %s %s", tc.spec, r["memory_store_id"], r["access"], tc.id, tc.access)
		}
	}
	s := e.obj(t, "session", "create", "--store", " Padded ", "--instructions", " Padded =be brief")
	if r := s["resources"].([]any)[0].(map[string]any); r["instructions"] != "be brief" {
		t.Errorf("--instructions for a padded name: %v", r)
	}
}

func TestCLIMalformedIfSHA256(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "S")
	e.ok(t, "memory", "create", "S", "--path", "/a.md", "--content", "x")
	for _, bad := range []string{"xyz", strings.Repeat("g", 64), strings.Repeat("a", 63)} {
		e.fails(t, exitInvalid, "invalid_request_error", "memory", "update", "S", "/a.md", "--content", "y", "--if-sha256", bad)
		e.fails(t, exitInvalid, "invalid_request_error", "memory", "delete", "S", "/a.md", "--if-sha256", bad)
	}
	// A well-formed sha that does not match is still a failed precondition.
	e.fails(t, exitConflict, "memory_precondition_failed_error", "memory", "update", "S", "/a.md", "--content", "y", "--if-sha256", strings.Repeat("A", 64))
	e.ok(t, "memory", "update", "S", "/a.md", "--content", "y", "--if-sha256", strings.ToUpper(sha("x")))
}

func TestCLIReadOnlyCommandsNeedADatabase(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo", "memfs.db")
	e := &cliEnv{db: missing}
	for _, args := range [][]string{
		{"store", "list"}, {"store", "get", "S"}, {"memory", "list", "S"}, {"memory", "get", "S", "/a"},
		{"version", "list", "S"}, {"log", "S"}, {"diff", "S", "/a"}, {"export", "S"}, {"session", "list"},
	} {
		err := e.fails(t, exitNotFound, "not_found_error", args...)
		if msg, _ := err["message"].(string); !strings.Contains(msg, "no memfs database at "+missing) {
			t.Errorf("memfs %q: %q does not say there is no database at %s", args, msg, missing)
		}
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Errorf("a read-only command created %s (%v)", filepath.Dir(missing), err)
	}
	// Writing commands still create it.
	e.ok(t, "store", "create", "--name", "S")
	e.ok(t, "store", "list")
}

// Every command that needs content a version no longer has exits 5.
func TestCLINoContentExitCode(t *testing.T) {
	e := newCLIEnv(t)
	memID, vers := historyStore(t, e)
	_ = memID
	deletedV, redactedV := vers[0]["id"].(string), vers[2]["id"].(string)
	e.ok(t, "version", "redact", "Hist", redactedV, "--yes")
	for _, args := range [][]string{
		{"restore", "Hist", redactedV},
		{"restore", "Hist", deletedV},
		{"diff", "Hist", redactedV},
		{"diff", "Hist", vers[1]["id"].(string)},
	} {
		e.fails(t, exitInvalid, "invalid_request_error", args...)
	}
	for _, v := range []string{redactedV, deletedV} {
		if _, _, code := e.exec(t, "", "version", "get", "Hist", v); code != exitInvalid {
			t.Errorf("version get %s (no content): exit %d, want %d", v, code, exitInvalid)
		}
	}
}

func TestCLICreatedFilters(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "Old")
	e.ok(t, "memory", "create", "Old", "--path", "/a", "--content", "a")
	future := "2999-01-01"
	if got := e.list(t, "store", "list", "--created-after", future); len(got) != 0 {
		t.Errorf("store list --created-after %s: %d stores, want 0", future, len(got))
	}
	if got := e.list(t, "store", "list", "--created-before", future, "--created-after", "1h"); len(got) != 1 {
		t.Errorf("store list in the last hour: %d stores, want 1", len(got))
	}
	if got := e.list(t, "version", "list", "Old", "--created-after", future); len(got) != 0 {
		t.Errorf("version list --created-after %s: %d, want 0", future, len(got))
	}
	if got := e.list(t, "version", "list", "Old", "--created-before", future); len(got) != 1 {
		t.Errorf("version list --created-before %s: %d, want 1", future, len(got))
	}
	e.fails(t, exitUsage, "invalid_request_error", "store", "list", "--created-after", "yesterday-ish")
}

func TestCLILogForPeople(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "P")
	e.ok(t, "memory", "create", "P", "--path", "/notes/a.md", "--content", "one\n")
	e.ok(t, "memory", "update", "P", "/notes/a.md", "--content", "two\n")
	e.ok(t, "memory", "create", "P", "--path", "/notes-archive/b.md", "--content", "b\n")
	e.ok(t, "memory", "update", "P", "/notes/a.md", "--path", "/notes/c.md")

	lines := func(out string) []string { return strings.Split(strings.TrimSpace(out), "\n")[1:] }
	all := lines(e.ok(t, "log", "P"))
	if len(all) != 4 || !strings.HasPrefix(all[0], "/notes/a.md → /notes/c.md ") {
		t.Fatalf("log starts each line with the path, newest first:\n%s", strings.Join(all, "\n"))
	}
	if got := lines(e.ok(t, "log", "P", "-n", "2")); len(got) != 2 {
		t.Errorf("log -n 2: %d lines", len(got))
	}
	if got := lines(e.ok(t, "log", "P", "/notes/")); len(got) != 3 {
		t.Errorf("log P /notes/: %d lines, want 3 (not /notes-archive/):\n%s", len(got), strings.Join(got, "\n"))
	}
	if got := lines(e.ok(t, "log", "P", "--since", "1h", "--until", "2999-01-01")); len(got) != 4 {
		t.Errorf("log --since 1h: %d lines, want 4", len(got))
	}
	if got := e.list(t, "log", "P", "--since", "2999-01-01"); len(got) != 0 {
		t.Errorf("log --since the future: %d versions", len(got))
	}
	me := e.list(t, "log", "P")[0]["created_by"].(map[string]any)["user_id"].(string)
	if got := lines(e.ok(t, "log", "P", "--actor", me)); len(got) != 4 {
		t.Errorf("log --actor %s: %d lines", me, len(got))
	}
	// A session that does not exist is exit 3, wherever a session is named.
	e.fails(t, exitNotFound, "not_found_error", "log", "P", "--actor", "sesn_nobody")
	// Short ids as the log shows them are accepted where a version is.
	// all[2] is the save of "two" at /notes/a.md.
	fields := strings.Fields(all[2])
	short := fields[len(fields)-1]
	if len(short) != shortIDLen || fields[0] != "/notes/a.md" {
		t.Fatalf("log line %q does not end in a short version id", all[2])
	}
	if got := e.ok(t, "version", "get", "P", short); got != "two\n" {
		t.Errorf("version get %s = %q, want two", short, got)
	}
	// -p shows each change: a path's log holds what was saved at it, the
	// rename at the path it moved to.
	patch := e.ok(t, "log", "P", "/notes/a.md", "-p") + e.ok(t, "log", "P", "/notes/c.md", "-p")
	for _, want := range []string{"-one", "+two", "rename from /notes/a.md", "rename to /notes/c.md"} {
		if !strings.Contains(patch, want) {
			t.Errorf("log -p lacks %q:\n%s", want, patch)
		}
	}
}

func TestCLIDiffByPath(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "D")
	e.ok(t, "memory", "create", "D", "--path", "/a.md", "--content", "one\n")
	e.ok(t, "memory", "update", "D", "/a.md", "--content", "two\n")
	e.ok(t, "memory", "update", "D", "/a.md", "--content", "three\n")
	if out := e.ok(t, "diff", "D", "/a.md"); !strings.Contains(out, "-two") || !strings.Contains(out, "+three") || strings.Contains(out, "one") {
		t.Errorf("diff D /a.md is not the last change:\n%s", out)
	}
	if out := e.ok(t, "diff", "D", "/a.md~2", "/a.md"); !strings.Contains(out, "-one") || !strings.Contains(out, "+three") {
		t.Errorf("diff /a.md~2 /a.md:\n%s", out)
	}
	if out := e.ok(t, "diff", "D", "/a.md", "--since", "1h"); !strings.Contains(out, "+three") || !strings.Contains(out, "/dev/null") {
		t.Errorf("diff --since 1h (before the memory existed) is not from nothing:\n%s", out)
	}
	if out := e.ok(t, "diff", "D", "/a.md", "--color", "always"); !strings.Contains(out, "\x1b[31m-two") || !strings.Contains(out, "\x1b[32m+three") {
		t.Errorf("diff --color always is not coloured: %q", out)
	}
	if out := e.ok(t, "diff", "D", "/a.md"); strings.Contains(out, "\x1b[") {
		t.Errorf("diff to a pipe is coloured: %q", out)
	}
	e.fails(t, exitUsage, "invalid_request_error", "diff", "D", "/a.md", "--color", "sometimes")
	e.fails(t, exitNotFound, "not_found_error", "diff", "D", "/a.md~9")
	// Pruned history: the diff says so.
	e.ok(t, "version", "prune", "D", "--older-than", "0s", "--keep-last", "1", "--yes")
	out, errs, code := e.exec(t, "", "diff", "D", "/a.md")
	if code != 0 || !strings.Contains(errs, "pruned") || !strings.Contains(out, "pruned") {
		t.Errorf("diff after pruning: exit %d, stdout %q, stderr %q; want it to say earlier versions were pruned", code, out, errs)
	}
}

func TestCLIPruneDryRun(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "Pr")
	e.ok(t, "memory", "create", "Pr", "--path", "/a", "--content", "1")
	for _, c := range []string{"2", "3", "4"} {
		e.ok(t, "memory", "update", "Pr", "/a", "--content", c)
	}
	e.ok(t, "memory", "create", "Pr", "--path", "/b", "--content", "b")
	e.ok(t, "memory", "delete", "Pr", "/b")
	plan := e.list(t, "version", "prune", "Pr", "--older-than", "0s", "--keep-last", "2", "--dry-run")
	if got := e.list(t, "version", "list", "Pr"); len(got) != 6 {
		t.Fatalf("--dry-run removed versions: %d left of 6", len(got))
	}
	done := e.list(t, "version", "prune", "Pr", "--older-than", "0s", "--keep-last", "2", "--yes")
	var a, b []string
	for _, v := range plan {
		a = append(a, v["id"].(string))
	}
	for _, v := range done {
		b = append(b, v["id"].(string))
	}
	if strings.Join(a, ",") != strings.Join(b, ",") || len(a) != 2 {
		t.Errorf("dry run planned %v, prune removed %v (want the same 2)", a, b)
	}
}

// Restoring a deleted memory starts a new memory at the path; its log
// still shows the old lineage.
func TestCLIRestoreKeepsLineage(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "R")
	old := strings.TrimSpace(e.ok(t, "memory", "create", "R", "--path", "/r.md", "--content", "v1\n"))
	e.ok(t, "memory", "update", "R", "/r.md", "--content", "v2\n")
	e.ok(t, "memory", "delete", "R", "/r.md")
	restored := strings.TrimSpace(e.ok(t, "restore", "R", "/r.md~1"))
	if restored == old {
		t.Fatalf("restore of a deleted memory kept its id %s", old)
	}
	if got := e.ok(t, "memory", "get", "R", "/r.md"); got != "v2\n" {
		t.Errorf("restored content %q, want v2 (the version before the deletion)", got)
	}
	log := e.list(t, "log", "R", "/r.md")
	var ops []string
	for _, v := range log {
		ops = append(ops, v["memory_id"].(string)[:4]+":"+v["operation"].(string))
	}
	if len(log) != 4 || log[0]["memory_id"] != restored || log[3]["memory_id"] != old {
		t.Fatalf("log /r.md = %v, want the restored memory's created then the old one's deleted, modified, created", ops)
	}
	// The restored version records where its content came from.
	from := log[2]["id"].(string)
	if log[0]["restored_from"] != from {
		t.Errorf("restored version's restored_from = %v, want %s", log[0]["restored_from"], from)
	}
	if text := e.ok(t, "log", "R", "/r.md"); !strings.Contains(text, "restored from "+shortID(from)) {
		t.Errorf("log does not say which version was restored:\n%s", text)
	}
}

func TestCLIConfirmsDestruction(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "Gone")
	// Without a terminal nobody is asked: a script gives --yes.
	e.ok(t, "store", "delete", "Gone", "--yes")
	e.ok(t, "store", "create", "--name", "Kept")
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("needs script(1) for a terminal")
	}
	run := func(answer string, args ...string) string {
		cmd := exec.Command(script, "-qec", strings.Join(append([]string{memfsBin}, quoteAll(args)...), " "), "/dev/null")
		cmd.Env = append(os.Environ(), "MEMFS_DB="+e.db)
		cmd.Stdin = strings.NewReader(answer)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := run("n\n", "store", "delete", "Kept"); !strings.Contains(out, "[y/N]") || !strings.Contains(out, "nothing done") {
		t.Errorf("store delete on a terminal, answered n: %q", out)
	}
	if got := e.list(t, "store", "list"); len(got) != 1 {
		t.Fatalf("a refused delete deleted the store")
	}
	if out := run("", "store", "delete", "Kept", "--yes"); strings.Contains(out, "[y/N]") {
		t.Errorf("--yes still asked: %q", out)
	}
	if got := e.list(t, "store", "list"); len(got) != 0 {
		t.Errorf("store delete --yes left the store")
	}
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}

func TestCLICursorWithOtherParameters(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "C")
	for _, p := range []string{"/a/1", "/a/2", "/b/1"} {
		e.ok(t, "memory", "create", "C", "--path", p, "--content", "x")
	}
	page := e.obj(t, "memory", "list", "C", "--limit", "1")
	cur, _ := page["next_page"].(string)
	if cur == "" {
		t.Fatalf("no next_page: %v", page)
	}
	e.ok(t, "memory", "list", "C", "--limit", "1", "--page", cur)
	err := e.fails(t, exitInvalid, "invalid_request_error", "memory", "list", "C", "--path-prefix", "/a/", "--page", cur)
	if msg, _ := err["message"].(string); !strings.Contains(msg, "other parameters") {
		t.Errorf("cursor with another --path-prefix: %q", msg)
	}
}

// On a terminal the log goes through $PAGER; into a pipe it does not.
func TestCLILogPager(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("needs script(1) for a terminal")
	}
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "Pg")
	e.ok(t, "memory", "create", "Pg", "--path", "/a.md", "--content", "x")
	if out := e.ok(t, "log", "Pg"); strings.Contains(out, "PAGED") {
		t.Errorf("log into a pipe used the pager: %q", out)
	}
	cmd := exec.Command(script, "-qec", memfsBin+" log Pg", "/dev/null")
	cmd.Env = append(os.Environ(), "MEMFS_DB="+e.db, "PAGER=sed s/^/PAGED:/")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PAGED:/a.md") {
		t.Errorf("log on a terminal with PAGER set: %v %q, want every line through the pager", err, out)
	}
	// A pager that quits early (as a person quitting less) is no error,
	// however much of the log was left: more than a pipe holds.
	db, err := versions.Open(e.db, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := db.ResolveStore(context.Background(), "Pg")
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.GetMemory(context.Background(), s.ID, "/a.md")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1500 {
		c := fmt.Sprint(i)
		if _, err := db.UpdateMemory(context.Background(), s.ID, m.ID, versions.MemoryUpdate{Content: &c}, versions.UserActor("t")); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	cmd = exec.Command(script, "-qec", memfsBin+" log Pg", "/dev/null")
	cmd.Env = append(os.Environ(), "MEMFS_DB="+e.db, "PAGER=head -n 2")
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "memfs:") {
		t.Errorf("log through a pager that quit early: %v %q", err, out)
	}
}
