package memtool_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/fusefs"
	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

// The mount's .history tree lies beside the stores, so the SDK's local
// tool over a mount (its /memories is the mount's "memories" store) and
// memtool answer view as they do without it.
func TestViewIgnoresHistoryTree(t *testing.T) {
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			t.Skip("needs root or fusermount3 to mount")
		}
	}
	ref := tsReference(t)
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{Name: "memories"})
	m, err := db.CreateMemory(ctx, st.ID, "/notes.md", "one\n", versions.UserActor("t"))
	if err != nil {
		t.Fatal(err)
	}
	two := "two\n"
	if _, err := db.UpdateMemory(ctx, st.ID, m.ID, versions.MemoryUpdate{Content: &two}, versions.UserActor("t")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateMemory(ctx, st.ID, "/topics/a.md", "a\n", versions.UserActor("t")); err != nil {
		t.Fatal(err)
	}
	commands := []string{
		`{"command":"view","path":"/memories"}`,
		`{"command":"view","path":"/memories/notes.md"}`,
		`{"command":"view","path":"/memories/.history"}`,
	}
	views := map[bool][]memtool.Result{}
	for _, hide := range []bool{false, true} {
		sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: st.ID}})
		if err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		srv, err := fusefs.Mount(root, db, sess, fusefs.Options{HideHistory: hide, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Unmount() })
		if _, err := os.Stat(filepath.Join(root, ".history", "memories", "notes.md")); (err == nil) == hide {
			t.Fatalf("with HideHistory %v, stat of the history: %v", hide, err)
		}
		node := exec.Command("node", filepath.Join(ref, "run.mjs"), root)
		node.Stdin = strings.NewReader(strings.Join(commands, "\n") + "\n")
		var stderr bytes.Buffer
		node.Stderr = &stderr
		out, err := node.Output()
		if err != nil {
			t.Fatalf("node run.mjs over the mount: %v\n%s", err, stderr.String())
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var r memtool.Result
			var raw struct {
				Content string `json:"content"`
				IsError bool   `json:"is_error"`
			}
			if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
				t.Fatal(err)
			}
			r.Content, r.IsError = raw.Content, raw.IsError
			views[hide] = append(views[hide], r)
		}
		if err := srv.Unmount(); err != nil {
			t.Fatal(err)
		}
	}
	tool := memtool.New(db, st.ID, versions.UserActor("t"))
	for i, c := range commands {
		with, without := views[false][i], views[true][i]
		if sansDirSizes(with.Content) != sansDirSizes(without.Content) || with.IsError != without.IsError {
			t.Errorf("%s over the mount with the history:\n%s\nwithout:\n%s", c, with.Content, without.Content)
		}
		if strings.Contains(with.Content, "memver_") || strings.Contains(with.Content, ".history") && !with.IsError {
			t.Errorf("%s over the mount shows the history:\n%s", c, with.Content)
		}
		ours := tool.RunJSON(ctx, []byte(c))
		if sansDirSizes(ours.Content) != sansDirSizes(with.Content) || ours.IsError != with.IsError {
			t.Errorf("%s: memtool answers\n%s\nthe SDK's tool over the mount\n%s", c, ours.Content, with.Content)
		}
	}
}
