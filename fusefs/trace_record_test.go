package fusefs

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// traceCases are the real tools whose kernel requests internal/mirror's
// suite replays (testdata/traces). Each starts in an empty directory with
// x.md holding "v1\n", written by the test; want is the history x.md must
// have once the tool ran (its operations, oldest first). An interactive
// editor is typed at on a pseudo-terminal by $TYPEKEYS
// (testdata/typekeys.py). vim and emacs make no backup of a file under
// /tmp, where the test mounts (vim's backupskip, emacs's
// backup-enable-predicate): the interactive ones are told to, as they
// would of a mount anywhere else, so that their traces hold the rename to
// the backup and the new file in its place.
var traceCases = []struct {
	name, script, want string
}{
	{"bash-echo-twice", `bash -c 'echo v1 > x.md; echo v2 > x.md'`, "created modified"},
	{"dash-echo-twice", `dash -c 'echo v1 > x.md; echo v2 > x.md'`, "created modified"},
	{"busybox-echo-twice", `busybox sh -c 'echo v1 > x.md; echo v2 > x.md'`, "created modified"},
	{"bash-cat-heredoc", "bash -c 'cat > x.md <<EOF\nv2\nEOF\n'", "created modified"},
	{"bash-printf", `bash -c "printf 'v2\n' > x.md"`, "created modified"},
	{"bash-exec3", `bash -c 'exec 3> x.md; echo v2 >&3; exec 3>&-'`, "created modified"},
	{"bash-colon", `bash -c ': > x.md'`, "created modified"},
	{"sed-i", `sed -i s/v1/v2/ x.md`, "created modified"},
	{"perl-pi", `perl -pi -e s/v1/v2/ x.md`, "created modified"},
	{"python-os-replace", `python3 -c 'import os, tempfile
fd, t = tempfile.mkstemp(dir=".")
os.write(fd, b"v2\n"); os.close(fd); os.replace(t, "x.md")'`, "created modified"},
	{"sdk-tmp-rename", `python3 -c 'import os, uuid
open("x.md").read(); t = ".tmp-%d-%s" % (os.getpid(), uuid.uuid4())
open(t, "w").write("v2\n"); os.rename(t, "x.md")'`, "created modified"},
	{"cp-mv", `cp x.md x.md.tmp && echo v2 >> x.md.tmp && mv x.md.tmp x.md`, "created modified"},
	{"git-lock", `printf 'v2\n' > x.md.lock && mv x.md.lock x.md`, "created modified"},
	{"vim", `vim -u NONE -i NONE -n -es -c 's/v1/v2/' -c wq x.md`, "created modified"},
	{"vim-swap", `vim -u NONE -i NONE -es -c 'set backupcopy=no writebackup' -c 's/v1/v2/' -c wq x.md`, "created modified"},
	{"vim-tty", `python3 "$TYPEKEYS" 1.2 '"Ov2\x1b\x00:wq\r"' vim -N -u DEFAULTS -i NONE --cmd 'set backupskip=' x.md`, "created modified"},
	{"nano", `python3 "$TYPEKEYS" 1.2 '"v2\r\x00\x0f\x00\r\x00\x18"' nano --locking x.md`, "created modified"},
	{"emacs", `emacs --batch -Q x.md --eval '(progn (goto-char (point-max)) (insert "v2\n") (save-buffer))'`, "created modified"},
	{"emacs-tty", `python3 "$TYPEKEYS" 1.2 '"v2\n\x00\x18\x13\x00\x18\x03"' emacs -nw -Q --eval '(setq backup-enable-predicate (lambda (f) t))' x.md`, "created modified"},
}

var goFuseLog = regexp.MustCompile(`^(rx|tx) \d+:`)

// TestToolTraces runs traceCases through a real mount and checks the
// history each leaves. With MEMFS_RECORD_TRACES=1 it also records their
// kernel requests (go-fuse's debug log) into
// internal/mirror/testdata/traces, which internal/mirror's
// TestReplayTraces replays without a mount.
func TestToolTraces(t *testing.T) {
	record := os.Getenv("MEMFS_RECORD_TRACES") != ""
	out := filepath.Join("..", "internal", "mirror", "testdata", "traces")
	if record {
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var buf bytes.Buffer
	if record {
		log.SetOutput(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return buf.Write(p)
		}))
		log.SetFlags(0)
		t.Cleanup(func() { log.SetOutput(os.Stderr); log.SetFlags(log.LstdFlags) })
	}
	typekeys, err := filepath.Abs(filepath.Join("testdata", "typekeys.py"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	st := e.store(t, "Traces")
	_, dir := e.mountStore(t, st, Options{Debug: record})
	for _, c := range traceCases {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			buf.Reset()
			mu.Unlock()
			sub := filepath.Join(dir, c.name)
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sub, "x.md"), []byte("v1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", c.script)
			cmd.Dir = sub
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "TERM=dumb", "TYPEKEYS="+typekeys)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v: %s", c.script, err, b)
			}
			// A save at release (`: > x.md`) comes after the tool exits:
			// the kernel sends RELEASE after close returns.
			if err := eventually(5*time.Second, func() error {
				e.settle()
				m := e.memory(t, st.ID, "/"+c.name+"/x.md")
				got := strings.Fields(ops(e.versionsOf(t, st.ID, m.ID)))
				var opsOnly []string
				for i := 0; i < len(got); i += 2 {
					opsOnly = append(opsOnly, strings.TrimSuffix(got[i], ","))
				}
				if strings.Join(opsOnly, " ") != c.want {
					return fmt.Errorf("%s made %v, want %s", c.name, got, c.want)
				}
				return nil
			}); err != nil {
				t.Error(err)
			}
			if !record {
				return
			}
			mu.Lock()
			var lines []string
			for l := range strings.SplitSeq(buf.String(), "\n") {
				if goFuseLog.MatchString(l) {
					lines = append(lines, l)
				}
			}
			mu.Unlock()
			header := fmt.Sprintf("# %s\n# script: %s\n# dir: %s\n# want: %s\n", c.name, strings.ReplaceAll(c.script, "\n", "\\n"), c.name, c.want)
			if err := os.WriteFile(filepath.Join(out, c.name+".trace"), []byte(header+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
