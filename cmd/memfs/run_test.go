package main

// End-to-end tests of `memfs run` and `memfs session prompt`: the built
// binary, a real database, real FUSE mounts inside the sandbox's private
// namespace, and a shell script as the agent reporting what it could do.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// runEnv is a database in a directory of its own (the one the sandbox
// hides) and a mount root beside it.
type runEnv struct {
	dir, db, root string
	out           string // granted to the command with --rw: where it leaves what tests read
}

func newRunEnv(t *testing.T) *runEnv {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("memfs run needs root")
	}
	dir := t.TempDir()
	// The tests' temporary directories are private to root; a sandboxed
	// user must be able to reach the mount root below them.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e := &runEnv{dir: dir, db: filepath.Join(dir, "db", "memfs.db"), root: filepath.Join(dir, "memory"), out: filepath.Join(dir, "out")}
	if err := os.Mkdir(e.out, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.out, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runAssertNoMounts(t, dir) })
	return e
}

// memfs runs the binary and returns stdout, stderr and the exit code.
func (e *runEnv) memfs(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := e.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("memfs %q: %v", args, err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func (e *runEnv) command(args ...string) *exec.Cmd {
	cmd := exec.Command(memfsBin, args...)
	cmd.Env = append(os.Environ(), "MEMFS_DB="+e.db, "ROOT="+e.root, "DBFILE="+e.db)
	return cmd
}

func (e *runEnv) ok(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := e.memfs(t, args...)
	if code != 0 {
		t.Fatalf("memfs %q exited %d: %s", args, code, errs)
	}
	return strings.TrimSpace(out)
}

func (e *runEnv) json(t *testing.T, v any, args ...string) {
	t.Helper()
	out := e.ok(t, append([]string{"--format", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("memfs %q: %v\n%s", args, err, out)
	}
}

// stores makes a read-write store "Agent Notes" and a read-only reference
// store holding one memory.
func (e *runEnv) stores(t *testing.T) {
	t.Helper()
	e.ok(t, "store", "create", "--name", "Agent Notes", "--description", "What the agent learned")
	e.ok(t, "store", "create", "--name", "Reference", "--description", "House style")
	e.ok(t, "memory", "create", "Reference", "--path", "/style.md", "--content", "Use short sentences.\n")
}

// runAssertNoMounts fails if the host still has a mount below dir.
func runAssertNoMounts(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], dir) {
			t.Errorf("a mount outlived memfs run: %s", line)
			_ = syscall.Unmount(f[1], syscall.MNT_DETACH)
		}
	}
}

// runChecks parses the "ok NAME" / "FAIL NAME" lines of a sandboxed script.
func runChecks(out string) map[string]bool {
	m := map[string]bool{}
	for line := range strings.SplitSeq(out, "\n") {
		if name, ok := strings.CutPrefix(line, "ok "); ok {
			m[name] = true
		} else if name, ok := strings.CutPrefix(line, "FAIL "); ok {
			m[name] = false
		}
	}
	return m
}

// agentScript is the agent: each check prints "ok NAME" or "FAIL NAME".
const agentScript = `
check() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "ok $name"; else echo "FAIL $name"; fi; }
fails() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "FAIL $name"; else echo "ok $name"; fi; }
echo "session $MEMFS_SESSION_ID"
check listing test "$(ls "$ROOT" | tr '\n' ' ')" = "agent-notes reference "
check write sh -c 'echo "first note" > "$ROOT/agent-notes/a.md" && echo more >> "$ROOT/agent-notes/a.md"'
check edit sed -i 's/first/1st/' "$ROOT/agent-notes/a.md"
check mkdir-mv sh -c 'mkdir -p "$ROOT/agent-notes/topics" && mv "$ROOT/agent-notes/a.md" "$ROOT/agent-notes/topics/a.md"'
check read-back grep -qx "1st note" "$ROOT/agent-notes/topics/a.md"
check read-ro grep -q "short sentences" "$ROOT/reference/style.md"
fails write-ro sh -c 'echo x > "$ROOT/reference/new.md"'
fails edit-ro sh -c 'echo x >> "$ROOT/reference/style.md"'
fails create-in-root touch "$ROOT/intruder"
fails mkdir-in-root mkdir "$ROOT/intruder"
fails umount umount "$ROOT"
fails umount-lazy umount -l "$ROOT"
fails remount mount -o remount,rw "$ROOT"
fails read-db cat "$DBFILE"
fails list-db ls "$(dirname "$DBFILE")/memfs.db"
check no-db-via-proc sh -c 'for d in /proc/[0-9]*/root; do if head -c 15 "$d$DBFILE" 2>/dev/null | grep -qa SQLite; then exit 1; fi; done'
check prompt-rw grep -qF "$ROOT/agent-notes/ (read-write)" "$MEMFS_PROMPT_FILE"
check prompt-ro grep -qF "$ROOT/reference/ (read-only)" "$MEMFS_PROMPT_FILE"
check no-caps grep -q '^CapEff:[[:space:]]*0000000000000000$' /proc/self/status
check no-bounding grep -q '^CapBnd:[[:space:]]*0000000000000000$' /proc/self/status
check no-new-privs grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/self/status
check daemon-hidden sh -c '! cat /proc/[0-9]*/cmdline | tr "\0" " " | grep -q -- "--ready[-]fd"'
`

var agentChecks = []string{"listing", "write", "edit", "mkdir-mv", "read-back", "read-ro", "write-ro", "edit-ro",
	"create-in-root", "mkdir-in-root", "umount", "umount-lazy", "remount", "read-db", "list-db", "no-db-via-proc",
	"prompt-rw", "prompt-ro", "no-caps", "no-bounding", "no-new-privs", "daemon-hidden"}

func TestRunSandbox(t *testing.T) {
	for _, tc := range []struct {
		name string
		user []string
	}{{"Root", nil}, {"OtherUser", []string{"--user", "65534:65534"}}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			args := append([]string{"run", "--store", "Agent Notes", "--store", "Reference:read_only", "--mount-root", e.root,
				"--pass-env", "ROOT", "--env", "DBFILE=" + e.db}, tc.user...)
			out, errs, code := e.memfs(t, append(args, "--", "sh", "-c", agentScript)...)
			if code != 0 {
				t.Fatalf("memfs run exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			got := runChecks(out)
			for _, name := range agentChecks {
				if !got[name] {
					t.Errorf("check %s failed or missing", name)
				}
			}
			if t.Failed() {
				t.Logf("agent output:\n%s\nstderr:\n%s", out, errs)
			}
			sessionID := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "session "))

			var page versions.Page[versions.Version]
			e.json(t, &page, "version", "list", "Agent Notes")
			if len(page.Data) == 0 {
				t.Fatal("the agent's writes left no version")
			}
			for _, v := range page.Data {
				if v.CreatedBy == nil || v.CreatedBy.Type != "session_actor" || v.CreatedBy.ID != sessionID {
					t.Errorf("version %s (%s %v) created by %+v, want session_actor %s", v.ID, v.Operation, v.Path, v.CreatedBy, sessionID)
				}
			}
			var ref versions.Page[versions.Version]
			e.json(t, &ref, "version", "list", "Reference")
			if len(ref.Data) != 1 {
				t.Errorf("the read-only store has %d versions, want the 1 preloaded", len(ref.Data))
			}
			var sess versions.Session
			e.json(t, &sess, "session", "get", sessionID)
			if sess.EndedAt == nil {
				t.Errorf("session %s not ended after memfs run returned", sessionID)
			}
		})
	}
}

// With --log the daemon's log goes to the file, not to the terminal an
// interactive agent draws on; a bad --log is refused before anything runs.
func TestRunLog(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	logFile := filepath.Join(e.dir, "daemon.log")
	script := `echo x > "$MEMFS_MOUNT_ROOT/reference/refused.md"; echo done`
	out, errs, code := e.memfs(t, "run", "--store", "Reference:read_only", "--mount-root", e.root, "--log", logFile, "--", "sh", "-c", script)
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("memfs run exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"msg=mounted", "msg=refused", "errno=EROFS", "msg=unmounted"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the --log file lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(errs, "level=") {
		t.Errorf("daemon log lines reached standard error despite --log:\n%s", errs)
	}
	_, errs, code = e.memfs(t, "run", "--store", "Reference", "--mount-root", e.root, "--log", filepath.Join(e.dir, "missing", "daemon.log"), "--", "true")
	if code != 5 || !strings.Contains(errs, "--log") {
		t.Errorf("memfs run with an unwritable --log: exit %d, stderr:\n%s\nwant exit 5 naming --log", code, errs)
	}
}

func TestRunExitStatus(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	for _, tc := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 7", 7}, {"kill -KILL $$", 128 + 9}} {
		t.Run(tc.script, func(t *testing.T) {
			_, errs, code := e.memfs(t, "run", "--store", "Agent Notes", "--mount-root", e.root, "--", "sh", "-c", tc.script)
			if code != tc.want {
				t.Errorf("memfs run exited %d, want %d; stderr:\n%s", code, tc.want, errs)
			}
		})
	}
}

func TestRunSignal(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	id := e.ok(t, "session", "create", "--store", "Agent Notes")
	marker, started := filepath.Join(e.out, "trapped"), filepath.Join(e.out, "started")
	script := fmt.Sprintf(`trap 'echo TERM > %q; exit 42' TERM
touch %q
while :; do sleep 0.05; done`, marker, started)
	cmd := e.command("run", "--session", id, "--mount-root", e.root, "--rw", e.out, "--", "sh", "-c", script)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the command never started; stderr:\n%s", errb.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got := cmd.ProcessState.ExitCode(); got != 42 {
		t.Errorf("memfs run exited %d, want the command's 42; stderr:\n%s", got, errb.String())
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "TERM\n" {
		t.Errorf("the command's TERM trap left %q, %v", b, err)
	}
	var sess versions.Session
	e.json(t, &sess, "session", "get", id)
	if sess.EndedAt == nil {
		t.Errorf("session %s not ended after memfs run returned", id)
	}
}

// A `memfs run` killed outright leaves no mount, no command and no open
// session behind.
func TestRunKilled(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	idFile := filepath.Join(e.out, "session")
	script := fmt.Sprintf(`echo "$MEMFS_SESSION_ID" > %q; exec sleep 300`, idFile)
	cmd := e.command("run", "--store", "Agent Notes", "--mount-root", e.root, "--rw", e.out, "--", "sh", "-c", script)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	for deadline := time.Now().Add(30 * time.Second); id == ""; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(idFile); err == nil && strings.HasSuffix(string(b), "\n") {
			id = strings.TrimSpace(string(b))
		} else if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the command never started; stderr:\n%s", errb.String())
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var sess versions.Session
		e.json(t, &sess, "session", "get", id)
		if sess.EndedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s still open 20s after memfs run was killed; stderr:\n%s", id, errb.String())
		}
	}
	// The daemon ended the session as it exited; the cleanup checks that
	// it left no mount.
}

// The prompt names every store at its path under the mount root, its
// access, description and instructions.
func TestSessionPrompt(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	id := e.ok(t, "session", "create", "--store", "Agent Notes", "--store", "Reference:read_only",
		"--instructions", "Agent Notes=Keep one file per topic")
	text := e.ok(t, "session", "prompt", id)
	for _, want := range []string{
		"- Agent Notes at /mnt/memory/agent-notes/ (read-write).\n  Its description, as the store's owner wrote it:\n  > What the agent learned\n  Its instructions for this session:\n  > Keep one file per topic\n",
		"- Reference at /mnt/memory/reference/ (read-only).\n  Its description, as the store's owner wrote it:\n  > House style\n",
		"at most 102400 bytes", "EROFS", "/mnt/memory/, which is itself read-only",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("prompt lacks %q:\n%s", want, text)
		}
	}
	var obj map[string]any
	e.json(t, &obj, "session", "prompt", id, "--mount-root", "/srv/mem")
	if obj["type"] != "session_prompt" || obj["session_id"] != id || len(obj) != 3 {
		t.Errorf("json prompt = %v, want type session_prompt, session_id and text", obj)
	}
	if s, _ := obj["text"].(string); !strings.Contains(s, "/srv/mem/agent-notes/ (read-write)") {
		t.Errorf("--mount-root not applied to the prompt:\n%s", s)
	}
	if _, errs, code := e.memfs(t, "session", "prompt", "sesn_nosuch"); code != exitNotFound {
		t.Errorf("prompt of an unknown session exited %d, want %d: %s", code, exitNotFound, errs)
	}
}

func TestRunErrors(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	e.ok(t, "store", "create", "--name", "Old")
	e.ok(t, "store", "archive", "Old", "--yes")
	nine := []string{"run", "--mount-root", e.root}
	for i := range 9 {
		name := fmt.Sprintf("S%d", i)
		e.ok(t, "store", "create", "--name", name)
		nine = append(nine, "--store", name)
	}
	ended := e.ok(t, "session", "create", "--store", "Agent Notes")
	e.ok(t, "session", "end", ended)
	busy := filepath.Join(e.dir, "busy")
	if err := os.Mkdir(busy, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("busy", busy, "tmpfs", 0, "size=4k"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(busy, syscall.MNT_DETACH) })

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in the message
	}{
		{"TooManyStores", append(nine, "--", "true"), exitInvalid, "at most 8"},
		{"ArchivedStore", []string{"run", "--store", "Old", "--mount-root", e.root, "--", "true"}, exitReadOnly, "archived"},
		{"UnknownStore", []string{"run", "--store", "Nope", "--mount-root", e.root, "--", "true"}, exitNotFound, "Nope"},
		{"EndedSession", []string{"run", "--session", ended, "--mount-root", e.root, "--", "true"}, exitConflict, "ended"},
		{"MountRootBusy", []string{"run", "--store", "Agent Notes", "--mount-root", busy, "--", "true"}, exitConflict, "busy"},
		{"NoCommand", []string{"run", "--store", "Agent Notes", "--mount-root", e.root}, exitUsage, "command"},
		{"SessionAndStore", []string{"run", "--session", ended, "--store", "Agent Notes", "--", "true"}, exitUsage, "not both"},
		{"CommandNotFound", []string{"run", "--store", "Agent Notes", "--mount-root", e.root, "--", "no-such-agent-memfs"}, 127, "no-such-agent-memfs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := e.memfs(t, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and a message with %q (stdout %q)", code, errs, tc.code, tc.want, out)
			}
		})
	}
	var page versions.Page[versions.Session]
	e.json(t, &page, "session", "list")
	for _, s := range page.Data {
		if s.EndedAt == nil {
			t.Errorf("session %s left open by a failed run", s.ID)
		}
	}
}

func TestRenderPrompt(t *testing.T) {
	instr := "Keep one file per topic\nand date every entry"
	sess := &versions.Session{ID: "sesn_x", Resources: []versions.Attachment{
		{Name: "Notes", Slug: "notes", Access: versions.ReadWrite, Description: "What I learned", Instructions: &instr},
		{Name: "Docs  &\nmore", Slug: "docs-more", Access: versions.ReadOnly},
	}}
	same := renderPrompt(sess, "/mnt/memory", []int{100, 100})
	for _, want := range []string{
		"You have 2 persistent memory stores",
		"- Notes at /mnt/memory/notes/ (read-write).\n  Its description, as the store's owner wrote it:\n  > What I learned\n  Its instructions for this session:\n  > Keep one file per topic\n  > and date every entry\n",
		"- Docs & more at /mnt/memory/docs-more/ (read-only).\n",
		"at most 100 bytes each",
	} {
		if !strings.Contains(same, want) {
			t.Errorf("prompt lacks %q:\n%s", want, same)
		}
	}
	differ := renderPrompt(sess, "/srv/m/", []int{100, 200})
	for _, want := range []string{"/srv/m/notes/ (read-write, files up to 100 bytes)", "/srv/m/docs-more/ (read-only, files up to 200 bytes)", "directly in /srv/m/,"} {
		if !strings.Contains(differ, want) {
			t.Errorf("prompt lacks %q:\n%s", want, differ)
		}
	}
	one := renderPrompt(&versions.Session{Resources: sess.Resources[:1]}, "/mnt/memory", []int{100})
	if !strings.Contains(one, "You have 1 persistent memory store, mounted as a directory") {
		t.Errorf("singular wording missing:\n%s", one)
	}
}

// A platform without the privilege or the device is told what to do.
func TestRunEnvironmentErrors(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	run := []string{memfsBin, "run", "--store", "Agent Notes", "--mount-root", e.root, "--", "true"}
	for _, tc := range []struct {
		name    string
		wrapper []string // runs memfs in the environment under test
		want    string
	}{
		{"NoCapSysAdmin", []string{"setpriv", "--bounding-set=-sys_admin", "--"}, "needs root or CAP_SYS_ADMIN"},
		// A private mount namespace whose /dev is empty, as in a container
		// started without --device /dev/fuse.
		{"NoDevFuse", []string{"unshare", "--mount", "--propagation", "private", "sh", "-c", `mount -t tmpfs none /dev && exec "$@"`, "sh"}, "--device /dev/fuse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := exec.LookPath(tc.wrapper[0]); err != nil {
				t.Skipf("%s is not installed", tc.wrapper[0])
			}
			args := append(append([]string{}, tc.wrapper...), run...)
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), "MEMFS_DB="+e.db)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			_ = cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != exitInternal || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and a message with %q", code, errb.String(), exitInternal, tc.want)
			}
		})
	}
	var page versions.Page[versions.Session]
	e.json(t, &page, "session", "list")
	if len(page.Data) != 0 {
		t.Errorf("a refused run created %d sessions", len(page.Data))
	}
}

// What a shell or a terminal acts on is escaped in logged values; letters
// of any script and path punctuation stay readable.
func TestEscapeLogValue(t *testing.T) {
	for in, want := range map[string]string{
		"/notes/todo.md":      "/notes/todo.md",
		"/заметки/è.md":       "/заметки/è.md",
		"/a b.md":             "/a b.md",
		"/$(id)`x`;|&<>'\"\\": `/\x24\x28id\x29\x60x\x60\x3b\x7c\x26\x3c\x3e\x27\x22\x5c`,
		"line\nlevel=ERROR":   `line\x0alevel=ERROR`,
		"\x1b[2J\u202e\xff":   `\x1b[2J\xe2\x80\xae\xff`,
	} {
		if got := escapeLogValue(in); got != want {
			t.Errorf("escapeLogValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// A logged message keeps its punctuation readable, and a log of
// hostile values, sourced by a shell, still runs nothing.
func TestLogSafeSourced(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: logSafe}))
	log.Info("the store's limit; retry", "path", "/a b';touch "+marker+";'", "err", "x $(touch "+marker+") `touch "+marker+"`\n"+"touch "+marker)
	log.Info("refused", "path", "/a';touch "+marker+";'")
	if !strings.Contains(buf.String(), `msg="the store's limit; retry"`) {
		t.Errorf("message not kept readable: %s", buf.String())
	}
	file := filepath.Join(dir, "log")
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	exec.Command("sh", "-c", ". "+file).Run() // syntax errors are fine; running the payload is not
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("sourcing the log ran a command:\n%s", buf.String())
	}
}
