package memtool_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

// benchTool is a store of 200 memories in 20 directories.
func benchTool(b *testing.B) *memtool.Tool {
	b.Helper()
	db, err := versions.Open(filepath.Join(b.TempDir(), "memfs.db"), versions.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	st, err := db.CreateStore(ctx, versions.StoreParams{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		if _, err := db.CreateMemory(ctx, st.ID, fmt.Sprintf("/d%02d/m%03d.md", i%20, i), numbered(50), versions.UserActor("bench")); err != nil {
			b.Fatal(err)
		}
	}
	return memtool.New(db, st.ID, versions.UserActor("bench"))
}

func BenchmarkViewDirectory(b *testing.B) {
	tool := benchTool(b)
	for b.Loop() {
		if r := tool.Run(ctx, memtool.Command{Command: "view", Path: "/memories"}); r.IsError {
			b.Fatal(r.Content)
		}
	}
}

func BenchmarkViewFile(b *testing.B) {
	tool := benchTool(b)
	for b.Loop() {
		if r := tool.Run(ctx, memtool.Command{Command: "view", Path: "/memories/d07/m007.md"}); r.IsError {
			b.Fatal(r.Content)
		}
	}
}

// BenchmarkStrReplace alternates two edits of one line: each is a version.
func BenchmarkStrReplace(b *testing.B) {
	tool := benchTool(b)
	from, to := "line 25", "line XXV"
	for b.Loop() {
		if r := tool.Run(ctx, memtool.Command{Command: "str_replace", Path: "/memories/d07/m007.md", OldStr: &from, NewStr: &to}); r.IsError {
			b.Fatal(r.Content)
		}
		from, to = to, from
	}
}

func BenchmarkCreateDelete(b *testing.B) {
	tool := benchTool(b)
	text := "a new memory\n"
	for b.Loop() {
		if r := tool.Run(ctx, memtool.Command{Command: "create", Path: "/memories/new/x.md", FileText: &text}); r.IsError {
			b.Fatal(r.Content)
		}
		if r := tool.Run(ctx, memtool.Command{Command: "delete", Path: "/memories/new"}); r.IsError {
			b.Fatal(r.Content)
		}
	}
}
