package main

// End-to-end tests of the mount: the built binary runs as a daemon, and real
// tools (sh, cp, mv, rm, sed, tee, python3) work in the store's directory the
// way an agent would. The store's history is then read back through the CLI.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/versions"
)

// toolsRun tracks a mounted store and what its history should hold.
type toolsRun struct {
	t        *testing.T
	env      *e2eEnv
	store    string
	dir      string            // the store's directory in the mount
	contents map[string]string // path → content every live memory should have
	before   []versions.Version
}

// step runs script in the store's directory and returns the versions it
// added, oldest first. It also checks that every one is attributed to a
// session and that the live memories are exactly the expected ones.
func (r *toolsRun) step(script string) []versions.Version {
	r.t.Helper()
	sh(r.t, r.dir, script)
	after := r.env.versionList(r.t, r.store)
	added := newVersions(r.before, after)
	r.before = after
	for _, v := range added {
		if v.CreatedBy == nil || v.CreatedBy.Type != "session_actor" || !strings.HasPrefix(v.CreatedBy.ID, "sesn_") {
			r.t.Errorf("%q: version %s created_by %+v, want a session_actor", script, v.ID, v.CreatedBy)
		}
	}
	r.checkLive(script)
	return added
}

// checkLive checks that the store's live memories are exactly r.contents'
// paths, i.e. no tool left a stray temp file behind, and hold the expected
// content.
func (r *toolsRun) checkLive(script string) {
	r.t.Helper()
	live := r.env.memoryList(r.t, r.store)
	for p, m := range live {
		want, ok := r.contents[p]
		if !ok {
			r.t.Errorf("after %q: stray live memory %s", script, p)
			continue
		}
		if sum := sha256.Sum256([]byte(want)); m.ContentSHA256 != hex.EncodeToString(sum[:]) {
			r.t.Errorf("after %q: %s has content_sha256 %s, want that of %q", script, p, m.ContentSHA256, want)
		}
	}
	for p := range r.contents {
		if _, ok := live[p]; !ok {
			r.t.Errorf("after %q: memory %s missing from memory list", script, p)
		}
	}
}

func (r *toolsRun) memID(path string) string {
	r.t.Helper()
	m, ok := r.env.memoryList(r.t, r.store)[path]
	if !ok {
		r.t.Fatalf("no live memory at %s", path)
	}
	return m.ID
}

// wantOne checks that added is exactly one version with this operation on
// path, of memory memID when memID is not empty, and returns it.
func (r *toolsRun) wantOne(added []versions.Version, op versions.Operation, path, memID string) versions.Version {
	r.t.Helper()
	if len(added) != 1 {
		r.t.Fatalf("got %d new versions, want 1 %s of %s:%s", len(added), op, path, describeVersions(added))
	}
	v := added[0]
	if v.Operation != op || v.Path == nil || *v.Path != path {
		r.t.Errorf("got %s, want 1 %s of %s", describeVersions(added), op, path)
	}
	if memID != "" && v.MemoryID != memID {
		r.t.Errorf("version %s is of memory %s, want %s (the id must be kept)", v.ID, v.MemoryID, memID)
	}
	return v
}

// checkAtomicSave checks the versions of an atomic save onto target (write a
// temp file, rename it over target): exactly one "modified" version of
// target's memory at its path, and for the temp file at most one "created"
// and one "deleted" version of one other memory.
func (r *toolsRun) checkAtomicSave(added []versions.Version, target, targetID string) {
	r.t.Helper()
	var mine, temp []versions.Version
	for _, v := range added {
		if v.MemoryID == targetID {
			mine = append(mine, v)
		} else {
			temp = append(temp, v)
		}
	}
	if len(mine) != 1 || mine[0].Operation != versions.OpModified || mine[0].Path == nil || *mine[0].Path != target {
		r.t.Errorf("want exactly one modified version of %s (%s); new versions:%s", target, targetID, describeVersions(added))
	}
	ops := map[versions.Operation]int{}
	mems := map[string]bool{}
	for _, v := range temp {
		ops[v.Operation]++
		mems[v.MemoryID] = true
	}
	if len(mems) > 1 || ops[versions.OpModified] > 0 || ops[versions.OpCreated] > 1 || ops[versions.OpDeleted] > 1 {
		r.t.Errorf("the temp file may leave at most created+deleted of one memory; new versions:%s", describeVersions(added))
	}
	if ops[versions.OpCreated] != ops[versions.OpDeleted] {
		r.t.Errorf("the temp file's memory was created but not deleted (or the reverse); new versions:%s", describeVersions(added))
	}
}

func TestE2ERealTools(t *testing.T) {
	env := newE2EEnv(t)
	storeID, slug := env.createStore(t, "Demo Memory")
	mnt := mountDir(t)
	env.startMount(t, mnt, "--store", "Demo Memory")
	r := &toolsRun{t: t, env: env, store: storeID, dir: filepath.Join(mnt, slug), contents: map[string]string{}}
	if fi, err := os.Stat(r.dir); err != nil || !fi.IsDir() {
		t.Fatalf("store directory %s: %v", r.dir, err)
	}

	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"EchoCreate", func(t *testing.T) {
			r.contents["/f"] = "hi\n"
			v := r.wantOne(r.step("echo hi > f"), versions.OpCreated, "/f", "")
			if v.ContentSize == nil || *v.ContentSize != 3 {
				t.Errorf("created version size %v, want 3", v.ContentSize)
			}
		}},
		{"EchoAppend", func(t *testing.T) {
			id := r.memID("/f")
			r.contents["/f"] = "hi\nmore\n"
			r.wantOne(r.step("echo more >> f"), versions.OpModified, "/f", id)
		}},
		{"Cp", func(t *testing.T) {
			r.contents["/g"] = "hi\nmore\n"
			r.wantOne(r.step("cp f g"), versions.OpCreated, "/g", "")
		}},
		{"Mv", func(t *testing.T) {
			id := r.memID("/g")
			delete(r.contents, "/g")
			r.contents["/h"] = "hi\nmore\n"
			r.wantOne(r.step("mv g h"), versions.OpModified, "/h", id)
			if _, err := os.Stat(filepath.Join(r.dir, "g")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("stat g after mv: %v, want ENOENT", err)
			}
		}},
		{"MkdirP", func(t *testing.T) {
			if added := r.step("mkdir -p a/b/c"); len(added) != 0 {
				t.Errorf("mkdir -p made versions:%s", describeVersions(added))
			}
			for _, d := range []string{"a", "a/b", "a/b/c"} {
				if fi, err := os.Stat(filepath.Join(r.dir, d)); err != nil || !fi.IsDir() {
					t.Errorf("stat %s after mkdir -p: %v, want a directory", d, err)
				}
			}
		}},
		{"RmR", func(t *testing.T) {
			r.contents["/dir/x"] = "one\n"
			r.contents["/dir/sub/y"] = "two\n"
			added := r.step("mkdir -p dir/sub && echo one > dir/x && echo two > dir/sub/y")
			if len(added) != 2 {
				t.Errorf("setup made %d versions, want 2 created:%s", len(added), describeVersions(added))
			}
			ids := map[string]string{r.memID("/dir/x"): "/dir/x", r.memID("/dir/sub/y"): "/dir/sub/y"}
			delete(r.contents, "/dir/x")
			delete(r.contents, "/dir/sub/y")
			added = r.step("rm -r dir")
			if len(added) != 2 {
				t.Errorf("rm -r made %d versions, want 2 deleted:%s", len(added), describeVersions(added))
			}
			for _, v := range added {
				if v.Operation != versions.OpDeleted || ids[v.MemoryID] == "" {
					t.Errorf("rm -r made %s %s, want deleted of %v", v.Operation, v.MemoryID, ids)
				}
				delete(ids, v.MemoryID)
			}
			if _, err := os.Stat(filepath.Join(r.dir, "dir")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("stat dir after rm -r: %v, want ENOENT", err)
			}
		}},
		{"SedInPlace", func(t *testing.T) {
			id := r.memID("/f")
			r.contents["/f"] = "hello\nmore\n"
			r.checkAtomicSave(r.step("sed -i s/hi/hello/ f"), "/f", id)
		}},
		{"Tee", func(t *testing.T) {
			// Bigger than tee's buffer, so the save spans several write()s
			// and must still be one version.
			var b strings.Builder
			for i := 0; b.Len() < 20000; i++ {
				b.WriteString(strings.Repeat("line ", 10) + "\n")
			}
			input := filepath.Join(t.TempDir(), "input")
			if err := os.WriteFile(input, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			r.contents["/f2"] = b.String()
			v := r.wantOne(r.step("tee f2 < "+input+" > /dev/null"), versions.OpCreated, "/f2", "")
			if v.ContentSize == nil || *v.ContentSize != b.Len() {
				t.Errorf("tee's version size %v, want %d", v.ContentSize, b.Len())
			}
		}},
		{"PythonReplace", func(t *testing.T) {
			if _, err := exec.LookPath("python3"); err != nil {
				t.Skip("python3 not installed")
			}
			id := r.memID("/f")
			r.contents["/f"] = "from python\n"
			script := `python3 -c 'import os, tempfile
fd, tmp = tempfile.mkstemp(dir=".")
with os.fdopen(fd, "w") as fh:
    fh.write("from python\n")
os.replace(tmp, "f")'`
			r.checkAtomicSave(r.step(script), "/f", id)
		}},
	}
	for _, s := range steps {
		ok := t.Run(s.name, func(t *testing.T) {
			r.t = t
			defer func() { r.t = nil }()
			s.run(t)
		})
		if !ok {
			// Each step checks only the versions it added, so the
			// next ones still say something; their failures may stem
			// from this one.
			t.Errorf("step %s failed: later steps run on whatever state it left", s.name)
		}
	}

	t.Run("CatMatchesStore", func(t *testing.T) {
		for p, want := range r.contents {
			got := sh(t, r.dir, "cat ."+p)
			if got != want {
				t.Errorf("cat %s = %q, want %q", p, got, want)
			}
			if stored := env.cli(t, "memory", "get", storeID, p); stored != got {
				t.Errorf("memory get %s = %q, cat shows %q", p, stored, got)
			}
		}
	})

	t.Run("Xattrs", func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 not installed")
		}
		// The extended attributes, read the way a tool would: they name the head
		// the store holds, and its writer is this mount's session.
		const script = `python3 -c 'import os, sys
for p in sys.argv[1:]:
    print(" ".join(os.getxattr(p, "user.memfs." + a).decode() for a in ("id", "version", "sha256", "writer")))
try:
    os.setxattr(sys.argv[1], "user.note", b"x")
    print("setxattr succeeded")
except OSError as e:
    print("setxattr errno", e.errno)
' `
		live := env.memoryList(t, storeID)
		var paths []string
		for p := range r.contents {
			paths = append(paths, "."+p)
		}
		lines := strings.Split(strings.TrimSpace(sh(t, r.dir, script+strings.Join(paths, " "))), "\n")
		if len(lines) != len(paths)+1 {
			t.Fatalf("python printed %d lines for %d files:\n%s", len(lines), len(paths), strings.Join(lines, "\n"))
		}
		for i, p := range paths {
			m := live[p[1:]]
			f := strings.Fields(lines[i])
			if len(f) != 4 || f[0] != m.ID || f[1] != m.VersionID || f[2] != m.ContentSHA256 || !strings.HasPrefix(f[3], "session_actor:sesn_") {
				t.Errorf("%s: user.memfs.{id,version,sha256,writer} = %q, want %s %s %s session_actor:sesn_…", p, lines[i], m.ID, m.VersionID, m.ContentSHA256)
			}
		}
		if got, want := lines[len(lines)-1], fmt.Sprintf("setxattr errno %d", syscall.ENOTSUP); got != want {
			t.Errorf("setting user.note: %s, want %s (ENOTSUP)", got, want)
		}
	})
}
