package versions_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
)

func TestSessions(t *testing.T) {
	db := openDB(t)
	demo := newStore(t, db, versions.StoreParams{Name: "Demo Memory", Description: "notes"})
	rd := newStore(t, db, versions.StoreParams{Name: "R&D Notes"})
	twin := newStore(t, db, versions.StoreParams{Name: "demo memory!"})

	t.Run("create-snapshots-and-slugs", func(t *testing.T) {
		instr := "be brief"
		s, err := db.CreateSession(ctx, []versions.AttachmentParams{
			{StoreID: demo.ID, Instructions: &instr},
			{StoreID: rd.ID, Access: versions.ReadOnly},
			{StoreID: twin.ID},
		})
		ok(t, err)
		if !strings.HasPrefix(s.ID, "sesn_") || s.EndedAt != nil || len(s.Resources) != 3 {
			t.Fatalf("session %+v", s)
		}
		got := []string{s.Resources[0].MountPath, s.Resources[1].MountPath, s.Resources[2].MountPath}
		want := []string{"/mnt/memory/demo-memory", "/mnt/memory/r-d-notes", "/mnt/memory/demo-memory-2"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("mount paths %v, want %v", got, want)
		}
		a := s.Resources[0]
		if a.Access != versions.ReadWrite || *a.Instructions != "be brief" || a.Name != "Demo Memory" || a.Description != "notes" || a.Slug != "demo-memory" {
			t.Fatalf("attachment %+v", a)
		}
		if s.Resources[1].Access != versions.ReadOnly || s.Resources[1].Instructions != nil {
			t.Fatalf("attachment %+v", s.Resources[1])
		}

		// The snapshot does not follow later renames.
		_, err = db.UpdateStore(ctx, demo.ID, versions.StoreUpdate{Name: ptr("Renamed"), Description: ptr("new")})
		ok(t, err)
		again, err := db.GetSession(ctx, s.ID)
		ok(t, err)
		if again.Resources[0].Name != "Demo Memory" || again.Resources[0].Description != "notes" || again.Resources[0].MountPath != "/mnt/memory/demo-memory" {
			t.Fatalf("snapshot changed: %+v", again.Resources[0])
		}
		b, err := json.Marshal(again)
		ok(t, err)
		for _, w := range []string{`"type":"session"`, `"type":"memory_store"`, `"mount_path":"/mnt/memory/r-d-notes"`, `"access":"read_only"`} {
			if !strings.Contains(string(b), w) {
				t.Fatalf("json %s lacks %s", b, w)
			}
		}
	})
	t.Run("eight-allowed-nine-refused", func(t *testing.T) {
		var att []versions.AttachmentParams
		for i := range 9 {
			st := newStore(t, db, versions.StoreParams{Name: fmt.Sprint("store ", i)})
			att = append(att, versions.AttachmentParams{StoreID: st.ID})
		}
		_, err := db.CreateSession(ctx, att[:8])
		ok(t, err)
		_, err = db.CreateSession(ctx, att)
		wantCode(t, err, versions.CodeInvalid)
		_, err = db.CreateSession(ctx, nil)
		wantCode(t, err, versions.CodeInvalid)
	})
	t.Run("archived-store-refused", func(t *testing.T) {
		arch := newStore(t, db, versions.StoreParams{Name: "old"})
		_, err := db.ArchiveStore(ctx, arch.ID)
		ok(t, err)
		_, err = db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: demo.ID}, {StoreID: arch.ID}})
		e := wantCode(t, err, versions.CodeReadOnly)
		if !strings.Contains(e.Message, "archived") {
			t.Fatalf("message %q", e.Message)
		}
	})
	t.Run("unknown-store-refused", func(t *testing.T) {
		_, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: "memstore_nope"}})
		wantCode(t, err, versions.CodeNotFound)
	})
	t.Run("instructions-limit", func(t *testing.T) {
		ok4096 := strings.Repeat("i", versions.MaxInstructionsChars)
		_, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: demo.ID, Instructions: &ok4096}})
		ok(t, err)
		over := ok4096 + "i"
		_, err = db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: demo.ID, Instructions: &over}})
		wantCode(t, err, versions.CodeInvalid)
	})
	t.Run("bad-access-and-duplicates-refused", func(t *testing.T) {
		_, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: demo.ID, Access: "admin"}})
		wantCode(t, err, versions.CodeInvalid)
		_, err = db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: demo.ID}, {StoreID: demo.ID}})
		wantCode(t, err, versions.CodeInvalid)
	})
	t.Run("end-twice-harmless", func(t *testing.T) {
		s, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: rd.ID}})
		ok(t, err)
		e1, err := db.EndSession(ctx, s.ID)
		ok(t, err)
		e2, err := db.EndSession(ctx, s.ID)
		ok(t, err)
		if e1.EndedAt == nil || !e1.EndedAt.Equal(*e2.EndedAt) {
			t.Fatalf("ended_at %v then %v", e1.EndedAt, e2.EndedAt)
		}
		_, err = db.EndSession(ctx, "sesn_nope")
		wantCode(t, err, versions.CodeNotFound)
		_, err = db.GetSession(ctx, "sesn_nope")
		wantCode(t, err, versions.CodeNotFound)
	})
	t.Run("list-pages", func(t *testing.T) {
		var ids []string
		page := ""
		for {
			p, err := db.ListSessions(ctx, versions.SessionListOptions{Limit: 2, Page: page})
			ok(t, err)
			for _, s := range p.Data {
				ids = append(ids, s.ID)
				if len(s.Resources) == 0 {
					t.Fatalf("listed session without its attachments")
				}
			}
			if p.NextPage == nil {
				break
			}
			page = *p.NextPage
		}
		if len(ids) != 4 {
			t.Fatalf("listed %d sessions, want 4", len(ids))
		}
	})
	t.Run("session-actor-in-versions", func(t *testing.T) {
		s, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: rd.ID}})
		ok(t, err)
		m, err := db.CreateMemory(ctx, rd.ID, "/by-agent", "x", versions.SessionActor(s.ID))
		ok(t, err)
		v, err := db.GetVersion(ctx, rd.ID, m.VersionID)
		ok(t, err)
		if v.CreatedBy.Type != "session_actor" || v.CreatedBy.ID != s.ID {
			t.Fatalf("created_by %+v", v.CreatedBy)
		}
	})
}
