package main

import (
	"context"
	"encoding/json"
	"os/user"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
)

// historyStore makes a store where /plan.md was created, edited twice and
// deleted, and /other.md created: 5 versions.
func historyStore(t *testing.T, e *cliEnv) (memID string, vers []map[string]any) {
	t.Helper()
	e.ok(t, "store", "create", "--name", "Hist")
	memID = strings.TrimSpace(e.ok(t, "memory", "create", "Hist", "--path", "/plan.md", "--content", "one\ntwo\nthree\n"))
	e.ok(t, "memory", "update", "Hist", "/plan.md", "--content", "one\n2\nthree\n")
	e.ok(t, "memory", "update", "Hist", "/plan.md", "--content", "one\n2\nthree\nfour\n")
	e.ok(t, "memory", "create", "Hist", "--path", "/other.md", "--content", "other")
	e.ok(t, "memory", "delete", "Hist", memID)
	vers = e.list(t, "version", "list", "Hist", "--memory", memID)
	if len(vers) != 4 {
		t.Fatalf("versions of %s: %d, want 4", memID, len(vers))
	}
	return memID, vers
}

func TestCLIVersions(t *testing.T) {
	e := newCLIEnv(t)
	memID, vers := historyStore(t, e)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("List", func(t *testing.T) {
		var ops []string
		for _, v := range vers {
			wantKeys(t, v, "memory_version", versionKeys...)
			ops = append(ops, v["operation"].(string))
			by, _ := v["created_by"].(map[string]any)
			if by["type"] != "user_actor" || by["user_id"] != me.Username {
				t.Errorf("created_by = %v, want user_actor %s", v["created_by"], me.Username)
			}
			if v["content"] != nil {
				t.Errorf("basic view carries content %v", v["content"])
			}
		}
		if got, want := strings.Join(ops, ","), "deleted,modified,modified,created"; got != want {
			t.Errorf("operations newest first = %s, want %s", got, want)
		}
		if got := e.list(t, "version", "list", "Hist", "--memory", "/plan.md"); len(got) != 4 {
			t.Errorf("--memory by the path of a deleted memory: %d versions, want 4", len(got))
		}
		if got := e.list(t, "version", "list", "Hist", "--operation", "created"); len(got) != 2 {
			t.Errorf("--operation created: %d versions, want 2", len(got))
		}
		if got := e.list(t, "version", "list", "Hist", "--limit", "2"); len(got) != 2 {
			t.Errorf("--limit 2: %d versions", len(got))
		}
		full := e.list(t, "version", "list", "Hist", "--memory", memID, "--view", "full")
		if full[1]["content"] != "one\n2\nthree\nfour\n" {
			t.Errorf("full view of the last edit: content %v", full[1]["content"])
		}
		out := e.ok(t, "version", "list", "Hist")
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 6 {
			t.Errorf("version list text: %d lines, want a header and 5 rows:\n%s", len(lines), out)
		}
	})

	t.Run("Get", func(t *testing.T) {
		id := vers[3]["id"].(string)
		if got := e.ok(t, "version", "get", "Hist", id); got != "one\ntwo\nthree\n" {
			t.Errorf("version get text = %q", got)
		}
		v := e.obj(t, "version", "get", "Hist", id)
		wantKeys(t, v, "memory_version", versionKeys...)
		if v["content"] != "one\ntwo\nthree\n" || v["content_sha256"] != sha("one\ntwo\nthree\n") {
			t.Errorf("version get json = %v", v)
		}
		e.fails(t, exitNotFound, "not_found_error", "version", "get", "Hist", "memver_nope")
	})

	t.Run("Redact", func(t *testing.T) {
		other := e.list(t, "version", "list", "Hist", "--memory", "/other.md")
		e.fails(t, exitConflict, "conflict_error", "version", "redact", "Hist", other[0]["id"].(string), "--yes")
		id := vers[2]["id"].(string)
		v := e.obj(t, "version", "redact", "Hist", id, "--yes")
		wantKeys(t, v, "memory_version", versionKeys...)
		for _, k := range []string{"content", "content_sha256", "content_size_bytes", "path"} {
			if v[k] != nil {
				t.Errorf("redacted version keeps %s = %v", k, v[k])
			}
		}
		if v["redacted_at"] == nil || v["redacted_by"] == nil || v["operation"] != "modified" || v["created_by"] == nil {
			t.Errorf("redacted version lost who/what/when or lacks redacted_*: %v", v)
		}
		_, errs, code := e.exec(t, "", "version", "get", "Hist", id)
		if code != exitInvalid || !strings.Contains(errs, "redacted") {
			t.Errorf("version get of a redacted version: exit %d, stderr %q; want %d and a note saying redacted", code, errs, exitInvalid)
		}
	})

	t.Run("Prune", func(t *testing.T) {
		page := e.obj(t, "version", "prune", "Hist", "--older-than", "0s", "--keep-last", "1", "--yes")
		removed, _ := page["data"].([]any)
		// plan.md keeps its deleted version, other.md its created one.
		if len(removed) != 3 {
			t.Errorf("pruned %d versions, want 3: %v", len(removed), page)
		}
		if got := e.list(t, "version", "list", "Hist"); len(got) != 2 {
			t.Errorf("after pruning %d versions remain, want 2", len(got))
		}
	})
}

func TestCLIRestoreLogDiff(t *testing.T) {
	e := newCLIEnv(t)
	memID, vers := historyStore(t, e)

	t.Run("Diff", func(t *testing.T) {
		out := e.ok(t, "diff", "Hist", vers[2]["id"].(string))
		for _, want := range []string{"-two", "+2", " one", "--- /plan.md " + vers[3]["id"].(string), "+++ /plan.md " + vers[2]["id"].(string)} {
			if !strings.Contains(out, want) {
				t.Errorf("diff of the first edit lacks %q:\n%s", want, out)
			}
		}
		out = e.ok(t, "diff", "Hist", vers[3]["id"].(string), vers[1]["id"].(string))
		for _, want := range []string{"-two", "+2", "+four"} {
			if !strings.Contains(out, want) {
				t.Errorf("diff of two versions lacks %q:\n%s", want, out)
			}
		}
		created := e.ok(t, "diff", "Hist", vers[3]["id"].(string))
		if !strings.Contains(created, "+one") || strings.Contains(created, "\n-one") {
			t.Errorf("diff of a created version is not against empty:\n%s", created)
		}
		d := e.obj(t, "diff", "Hist", vers[0]["id"].(string))
		if d["from_version_id"] != vers[1]["id"] || !strings.Contains(d["diff"].(string), "-four") {
			t.Errorf("diff of the deletion = %v, want every line removed since %v", d, vers[1]["id"])
		}
	})

	t.Run("Restore", func(t *testing.T) {
		newID := strings.TrimSpace(e.ok(t, "restore", "Hist", vers[3]["id"].(string)))
		if !strings.HasPrefix(newID, "mem_") || newID == memID {
			t.Errorf("restore of a deleted memory printed %q, want a new mem_ id (old %s)", newID, memID)
		}
		if got := e.ok(t, "memory", "get", "Hist", "/plan.md"); got != "one\ntwo\nthree\n" {
			t.Errorf("restored content = %q", got)
		}
		m := e.obj(t, "restore", "Hist", vers[1]["id"].(string), "--path", "/plan-v3.md")
		wantKeys(t, m, "memory", memoryKeys...)
		if m["path"] != "/plan-v3.md" {
			t.Errorf("restore --path: %v", m)
		}
		// The deleted memory's path is taken again by the first restore.
		e.fails(t, exitConflict, "memory_path_conflict_error", "restore", "Hist", vers[1]["id"].(string))

		e.ok(t, "memory", "update", "Hist", newID, "--content", "changed")
		lineage := e.list(t, "version", "list", "Hist", "--memory", newID)
		m = e.obj(t, "restore", "Hist", lineage[len(lineage)-1]["id"].(string))
		if m["id"] != newID {
			t.Errorf("restoring a version of the live memory made %v, want an update of %s", m["id"], newID)
		}
		if got := e.ok(t, "memory", "get", "Hist", newID); got != "one\ntwo\nthree\n" {
			t.Errorf("content after restoring onto the live memory = %q", got)
		}
	})

	t.Run("Log", func(t *testing.T) {
		out := e.ok(t, "log", "Hist")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		header := strings.Fields(lines[0])
		if strings.Join(header, " ") != "PATH OPERATION ACTOR TIME SIZE SHA256 VERSION NOTE" {
			t.Errorf("log header = %q", lines[0])
		}
		if len(lines) != 1+9 {
			t.Fatalf("log: %d lines, want a header and 9 versions:\n%s", len(lines), out)
		}
		newest := lines[1]
		for _, want := range []string{"modified", "user ", "/plan.md", " 14 ", sha("one\ntwo\nthree\n")[:12]} {
			if !strings.Contains(newest, want) {
				t.Errorf("newest log line %q lacks %q", newest, want)
			}
		}
		if strings.Contains(newest, sha("one\ntwo\nthree\n")[:13]) {
			t.Errorf("log line %q shows more than 12 hex digits of the sha", newest)
		}
		// The log of a path shows its whole lineage: the live memory restored
		// there and the deleted one it was restored from.
		if got := strings.Count(strings.TrimSpace(e.ok(t, "log", "Hist", "/plan.md")), "\n"); got != 7 {
			t.Errorf("log /plan.md: %d versions, want 7 (restored, changed, restored onto, and the deleted memory's 4)", got)
		}
		// A memory's log joins it with the memory a restore recreated
		// from it after its deletion: its 4 versions and that one's 4.
		if got := strings.Count(strings.TrimSpace(e.ok(t, "log", "Hist", memID)), "\n"); got != 8 {
			t.Errorf("log %s: %d versions, want 8", memID, got)
		}
		e.fails(t, exitNotFound, "not_found_error", "log", "Hist", "/never.md")
		e.fails(t, exitNotFound, "not_found_error", "log", "Hist", "mem_never")
		page := e.obj(t, "log", "Hist")
		if data, _ := page["data"].([]any); len(data) != 9 {
			t.Errorf("log --format json: %d versions, want 9", len(data))
		}
	})

	t.Run("LogDeletedPath", func(t *testing.T) {
		e.ok(t, "memory", "delete", "Hist", "/plan-v3.md")
		out := e.ok(t, "log", "Hist", "/plan-v3.md")
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.Contains(lines[1], "deleted") {
			t.Errorf("log of a deleted path = %q, want deleted then created", out)
		}
	})

	t.Run("DiffRedacted", func(t *testing.T) {
		e.ok(t, "version", "redact", "Hist", vers[2]["id"].(string), "--yes")
		err := e.fails(t, exitInvalid, "invalid_request_error", "diff", "Hist", vers[1]["id"].(string))
		if msg, _ := err["message"].(string); !strings.Contains(msg, "redacted") {
			t.Errorf("diff against a redacted version: %q does not say it was redacted", msg)
		}
	})

	t.Run("LogMarksRedacted", func(t *testing.T) {
		out := e.ok(t, "log", "Hist", memID)
		if !strings.Contains(out, "redacted") {
			t.Errorf("log does not mark the redacted version:\n%s", out)
		}
	})

	t.Run("Export", func(t *testing.T) {
		out := e.ok(t, "export", "Hist")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		// 1 store, 2 live memories (/plan.md, /other.md), 10 versions.
		if len(lines) != 13 {
			t.Fatalf("export: %d lines, want 13:\n%s", len(lines), out)
		}
		var types []string
		for _, l := range lines {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("export line %q: %v", l, err)
			}
			types = append(types, m["type"].(string))
		}
		if types[0] != "memory_store" || types[1] != "memory" || types[2] != "memory" || types[3] != "memory_version" || types[12] != "memory_version" {
			t.Errorf("export order = %v, want store, memories, versions", types)
		}
	})
}

// A save that started from a version that was no longer the head (two
// mounts saving one file) is marked in the log.
func TestCLILogConflict(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "Shared")
	memID := strings.TrimSpace(e.ok(t, "memory", "create", "Shared", "--path", "/a.md", "--content", "base"))
	base := e.obj(t, "memory", "get", "Shared", memID)["memory_version_id"].(string)
	e.ok(t, "memory", "update", "Shared", memID, "--content", "first session's save")

	db, err := versions.Open(e.db, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.ResolveStore(context.Background(), "Shared")
	if err != nil {
		t.Fatal(err)
	}
	late := "second session's save, started from base"
	if _, err := db.UpdateMemory(context.Background(), s.ID, memID, versions.MemoryUpdate{Content: &late, BaseVersionID: base}, versions.SessionActor("sesn_late")); err != nil {
		t.Fatal(err)
	}

	lines := strings.Split(strings.TrimSpace(e.ok(t, "log", "Shared", "/a.md")), "\n")
	if len(lines) != 4 {
		t.Fatalf("log: %d lines, want a header and 3 versions:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if !strings.HasSuffix(lines[1], "conflict") || !strings.Contains(lines[1], "session sesn_late") {
		t.Errorf("the late save's log line %q is not marked conflict or not attributed to session sesn_late", lines[1])
	}
	for _, l := range lines[2:] {
		if strings.Contains(l, "conflict") {
			t.Errorf("log line %q is marked conflict", l)
		}
	}
	if v := e.list(t, "version", "list", "Shared", "--memory", memID); v[0]["conflict"] != true {
		t.Errorf("version list json: newest version has conflict %v, want true", v[0]["conflict"])
	}
}
