package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestCLIMemory(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "Notes", "--max-memory-bytes", "64")
	id := strings.TrimSpace(e.ok(t, "memory", "create", "Notes", "--path", "/projects/foo/todo.md", "--content", "buy milk"))
	if !strings.HasPrefix(id, "mem_") {
		t.Fatalf("memory create printed %q, want a mem_ id", id)
	}

	t.Run("CreateJSON", func(t *testing.T) {
		m := e.obj(t, "memory", "create", "Notes", "--path", "/readme.md", "--content", "")
		wantKeys(t, m, "memory", memoryKeys...)
		if m["content"] != nil {
			t.Errorf("create printed content %v, want null (the basic view)", m["content"])
		}
		if m["content_sha256"] != sha("") || m["content_size_bytes"] != 0.0 {
			t.Errorf("empty memory: sha %v size %v, want %s and 0", m["content_sha256"], m["content_size_bytes"], sha(""))
		}
	})

	t.Run("GetVerbatim", func(t *testing.T) {
		for _, ref := range []string{id, "/projects/foo/todo.md"} {
			if got := e.ok(t, "memory", "get", "Notes", ref); got != "buy milk" {
				t.Errorf("memory get %s = %q, want the content without an added newline", ref, got)
			}
		}
		m := e.obj(t, "memory", "get", "Notes", id)
		wantKeys(t, m, "memory", memoryKeys...)
		if m["content"] != "buy milk" || m["content_sha256"] != sha("buy milk") || m["content_size_bytes"] != 8.0 || m["path"] != "/projects/foo/todo.md" {
			t.Errorf("memory get json = %v", m)
		}
	})

	t.Run("FileAndStdin", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "in.txt")
		if err := os.WriteFile(f, []byte("from a file\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		e.ok(t, "memory", "create", "Notes", "--path", "/file.txt", "--file", f)
		if got := e.ok(t, "memory", "get", "Notes", "/file.txt"); got != "from a file\n" {
			t.Errorf("created from --file: %q", got)
		}
		_, errs, code := e.exec(t, "from stdin\nline 2\n", "memory", "create", "Notes", "--path", "/stdin.txt", "--file", "-")
		if code != 0 {
			t.Fatalf("--file - exited %d: %s", code, errs)
		}
		if got := e.ok(t, "memory", "get", "Notes", "/stdin.txt"); got != "from stdin\nline 2\n" {
			t.Errorf("created from stdin: %q", got)
		}
		_, errs, code = e.exec(t, "replaced\n", "memory", "update", "Notes", "/stdin.txt", "--file", "-")
		if code != 0 {
			t.Fatalf("update --file - exited %d: %s", code, errs)
		}
		if got := e.ok(t, "memory", "get", "Notes", "/stdin.txt"); got != "replaced\n" {
			t.Errorf("updated from stdin: %q", got)
		}
		e.fails(t, exitInvalid, "invalid_request_error", "memory", "create", "Notes", "--path", "/x", "--file", filepath.Join(t.TempDir(), "missing"))
	})

	t.Run("List", func(t *testing.T) {
		e.ok(t, "memory", "create", "Notes", "--path", "/projects/bar.md", "--content", "bar")
		items := e.list(t, "memory", "list", "Notes", "--path-prefix", "/projects/", "--depth", "1")
		var got []string
		for _, it := range items {
			got = append(got, it["type"].(string)+" "+it["path"].(string))
		}
		if want := "memory /projects/bar.md,memory_prefix /projects/foo/"; strings.Join(got, ",") != want {
			t.Errorf("depth 1 under /projects/ = %v, want %s", got, want)
		}
		for _, it := range items {
			if it["type"] == "memory_prefix" {
				wantKeys(t, it, "memory_prefix", "path")
			} else {
				wantKeys(t, it, "memory", memoryKeys...)
			}
		}
		full := e.list(t, "memory", "list", "Notes", "--view", "full", "--path-prefix", "/projects/foo/")
		if len(full) != 1 || full[0]["content"] != "buy milk" {
			t.Errorf("full view list = %v, want todo.md with its content", full)
		}
		out := e.ok(t, "memory", "list", "Notes")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if !strings.HasPrefix(lines[0], "PATH") || len(lines) != 6 {
			t.Errorf("memory list text = %q, want a header and 5 rows", out)
		}
		var paths []string
		for page, pages := "", 0; pages == 0 || page != ""; pages++ {
			if pages > 5 {
				t.Fatalf("--limit 2 over 5 memories: still a next page after %d pages", pages)
			}
			obj := e.obj(t, "memory", "list", "Notes", "--limit", "2", "--page", page)
			data := obj["data"].([]any)
			if len(data) > 2 {
				t.Errorf("--limit 2 gave a page of %d", len(data))
			}
			for _, d := range data {
				paths = append(paths, d.(map[string]any)["path"].(string))
			}
			page, _ = obj["next_page"].(string)
		}
		if want := "/file.txt,/projects/bar.md,/projects/foo/todo.md,/readme.md,/stdin.txt"; strings.Join(paths, ",") != want {
			t.Errorf("paged listing = %v, want %s", paths, want)
		}
		_, errs, _ := e.exec(t, "", "memory", "list", "Notes", "--limit", "2")
		if !strings.Contains(errs, "--page ") {
			t.Errorf("a text listing with more pages does not say how to see them; stderr %q", errs)
		}
		e.fails(t, exitInvalid, "invalid_request_error", "memory", "list", "Notes", "--depth", "2")
		e.fails(t, exitInvalid, "invalid_request_error", "memory", "list", "Notes", "--path-prefix", "/projects")
	})

	t.Run("UpdateAndRename", func(t *testing.T) {
		e.fails(t, exitConflict, "memory_precondition_failed_error", "memory", "update", "Notes", id, "--content", "x", "--if-sha256", sha("not it"))
		if got := e.ok(t, "memory", "get", "Notes", id); got != "buy milk" {
			t.Errorf("a failed precondition changed the content to %q", got)
		}
		m := e.obj(t, "memory", "update", "Notes", "/projects/foo/todo.md", "--content", "buy oat milk", "--path", "/todo.md", "--if-sha256", sha("buy milk"))
		wantKeys(t, m, "memory", memoryKeys...)
		if m["id"] != id || m["path"] != "/todo.md" || m["content_sha256"] != sha("buy oat milk") {
			t.Errorf("update with rename = %v, want id %s at /todo.md", m, id)
		}
		e.fails(t, exitNotFound, "not_found_error", "memory", "get", "Notes", "/projects/foo/todo.md")
	})

	t.Run("Errors", func(t *testing.T) {
		err := e.fails(t, exitConflict, "memory_path_conflict_error", "memory", "create", "Notes", "--path", "/todo.md", "--content", "again")
		if err["conflicting_memory_id"] != id {
			t.Errorf("path conflict error = %v, want conflicting_memory_id %s", err, id)
		}
		e.fails(t, exitInvalid, "invalid_request_error", "memory", "create", "Notes", "--path", "no-slash", "--content", "x")
		e.fails(t, exitInvalid, "invalid_request_error", "memory", "create", "Notes", "--path", "/a/../b", "--content", "x")
		tooBig := e.fails(t, exitInvalid, "invalid_request_error", "memory", "create", "Notes", "--path", "/big", "--content", strings.Repeat("x", 65))
		if msg, _ := tooBig["message"].(string); !strings.Contains(msg, "64") {
			t.Errorf("over-size message %q does not name the limit of 64 bytes", msg)
		}
		e.fails(t, exitNotFound, "not_found_error", "memory", "get", "Notes", "/nope")
		e.fails(t, exitNotFound, "not_found_error", "memory", "get", "Nope", "/todo.md")
		e.fails(t, exitNotFound, "not_found_error", "memory", "update", "Notes", "mem_nope", "--content", "x")

		_, errs, code := e.exec(t, "", "memory", "get", "Notes", "/nope")
		if code != exitNotFound || !strings.HasPrefix(errs, "memfs: ") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("text error: exit %d, stderr %q, want 3 and one line starting memfs:", code, errs)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		e.fails(t, exitConflict, "memory_precondition_failed_error", "memory", "delete", "Notes", "/todo.md", "--if-sha256", sha("old"))
		d := e.obj(t, "memory", "delete", "Notes", "/todo.md", "--if-sha256", sha("buy oat milk"))
		wantKeys(t, d, "memory_deleted", "id")
		if d["id"] != id {
			t.Errorf("memory_deleted id = %v, want %s", d["id"], id)
		}
		e.fails(t, exitNotFound, "not_found_error", "memory", "get", "Notes", id)
		e.fails(t, exitNotFound, "not_found_error", "memory", "delete", "Notes", id)
	})

	t.Run("StoreFull", func(t *testing.T) {
		e.ok(t, "store", "create", "--name", "Tiny", "--max-memories", "1")
		e.ok(t, "memory", "create", "Tiny", "--path", "/one", "--content", "1")
		e.fails(t, exitInvalid, "invalid_request_error", "memory", "create", "Tiny", "--path", "/two", "--content", "2")
		e.ok(t, "memory", "update", "Tiny", "/one", "--content", "still editable")
	})
}
