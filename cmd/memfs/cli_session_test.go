package main

import (
	"strings"
	"testing"
)

var attachmentKeys = []string{"memory_store_id", "access", "instructions", "name", "description", "mount_path"}

func TestCLISession(t *testing.T) {
	e := newCLIEnv(t)
	notes := strings.TrimSpace(e.ok(t, "store", "create", "--name", "User Preferences", "--description", "what the user likes"))
	e.ok(t, "store", "create", "--name", "R&D Notes")

	id := strings.TrimSpace(e.ok(t, "session", "create", "--store", "User Preferences", "--store", "R&D Notes:read_only",
		"--instructions", "R&D Notes=read, never guess"))
	if !strings.HasPrefix(id, "sesn_") {
		t.Fatalf("session create printed %q, want a sesn_ id", id)
	}

	t.Run("Get", func(t *testing.T) {
		s := e.obj(t, "session", "get", id)
		wantKeys(t, s, "session", "id", "agent", "environment_id", "title", "metadata", "status", "resources",
			"created_at", "updated_at", "archived_at", "ended_at", "budget", "deployment_id", "outcome_evaluations", "vault_ids")
		res, _ := s["resources"].([]any)
		if len(res) != 2 {
			t.Fatalf("resources = %v, want 2 attachments", s["resources"])
		}
		a, b := res[0].(map[string]any), res[1].(map[string]any)
		wantKeys(t, a, "memory_store", attachmentKeys...)
		if a["memory_store_id"] != notes || a["access"] != "read_write" || a["instructions"] != nil ||
			a["mount_path"] != "/mnt/memory/user-preferences" || a["description"] != "what the user likes" {
			t.Errorf("first attachment = %v", a)
		}
		if b["access"] != "read_only" || b["instructions"] != "read, never guess" || b["mount_path"] != "/mnt/memory/r-d-notes" {
			t.Errorf("second attachment = %v", b)
		}
		text := e.ok(t, "session", "get", id)
		for _, want := range []string{id, "/mnt/memory/r-d-notes", "read_only", "User Preferences"} {
			if !strings.Contains(text, want) {
				t.Errorf("session get text lacks %q:\n%s", want, text)
			}
		}
	})

	t.Run("List", func(t *testing.T) {
		items := e.list(t, "session", "list")
		if len(items) != 1 || items[0]["id"] != id {
			t.Errorf("session list = %v, want %s", items, id)
		}
		out := e.ok(t, "session", "list")
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.Contains(lines[1], id) {
			t.Errorf("session list text = %q", out)
		}
	})

	t.Run("End", func(t *testing.T) {
		s := e.obj(t, "session", "end", id)
		if s["ended_at"] == nil {
			t.Errorf("ended session has ended_at null: %v", s)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		e.fails(t, exitNotFound, "not_found_error", "session", "get", "sesn_nope")
		e.fails(t, exitNotFound, "not_found_error", "session", "create", "--store", "No Such Store")
		e.fails(t, exitUsage, "invalid_request_error", "session", "create", "--store", "User Preferences", "--instructions", "R&D Notes=x")
		e.ok(t, "store", "archive", "R&D Notes", "--yes")
		e.fails(t, exitReadOnly, "conflict_error", "session", "create", "--store", "R&D Notes")
		args := []string{"session", "create"}
		for i := 0; i < 9; i++ {
			args = append(args, "--store", "User Preferences:read_only")
		}
		e.fails(t, exitInvalid, "invalid_request_error", args...)
	})
}
