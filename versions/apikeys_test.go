package versions_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
)

func TestAPIKeys(t *testing.T) {
	db := openDB(t)
	k, secret, err := db.CreateAPIKey(ctx, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "sk-memfs-") || len(secret) < 40 || !strings.HasPrefix(k.ID, "apikey_") {
		t.Fatalf("key %q, id %q", secret, k.ID)
	}
	if got, err := db.AuthenticateAPIKey(ctx, secret); err != nil || got.ID != k.ID || !got.AllStores() || got.ReadOnly {
		t.Fatalf("AuthenticateAPIKey = %+v, %v, want %s for every store, read-write", got, err, k.ID)
	}
	_, other, err := db.CreateAPIKey(ctx, "ci")
	if err != nil || other == secret {
		t.Fatalf("a second key %q, %v", other, err)
	}
	for _, bad := range []string{"", secret + "x", secret[:len(secret)-1], "sk-memfs-" + strings.Repeat("A", 43)} {
		wantCode(t, errOf(db.AuthenticateAPIKey(ctx, bad)), versions.CodeNotFound)
	}
	keys, err := db.ListAPIKeys(ctx)
	if err != nil || len(keys) != 2 {
		t.Fatalf("ListAPIKeys = %v, %v", keys, err)
	}
	b, _ := json.Marshal(keys)
	if strings.Contains(string(b), secret[len("sk-memfs-"):len(secret)-4]) {
		t.Fatalf("the key list holds the key: %s", b)
	}
	r, err := db.RevokeAPIKey(ctx, k.ID)
	if err != nil || r.RevokedAt == nil {
		t.Fatalf("RevokeAPIKey = %+v, %v", r, err)
	}
	wantCode(t, errOf(db.AuthenticateAPIKey(ctx, secret)), versions.CodeNotFound)
	if _, err := db.AuthenticateAPIKey(ctx, other); err != nil {
		t.Errorf("revoking one key refused another: %v", err)
	}
	wantCode(t, errOf(db.RevokeAPIKey(ctx, "apikey_nope")), versions.CodeNotFound)
	wantCode(t, errOf3(db.CreateAPIKey(ctx, "")), versions.CodeInvalid)
	wantCode(t, errOf3(db.CreateAPIKey(ctx, "a\nb")), versions.CodeInvalid)
}

func errOf3[A, B any](_ A, _ B, err error) error { return err }

func TestSessionLifecycle(t *testing.T) {
	db := openDB(t)
	a := newStore(t, db, versions.StoreParams{Name: "A"})
	b := newStore(t, db, versions.StoreParams{Name: "B"})
	env, title := "env_1", "first"
	s1, err := db.CreateSessionFrom(ctx, versions.SessionParams{Resources: []versions.AttachmentParams{{StoreID: a.ID}},
		Agent: json.RawMessage(`{"type":"agent","id":"agent_1","version":2}`), EnvironmentID: &env, Title: &title, Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := db.CreateSessionFrom(ctx, versions.SessionParams{Resources: []versions.AttachmentParams{{StoreID: b.ID}}, Agent: json.RawMessage(`"agent_2"`)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.GetSession(ctx, s1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Agent) != `{"type":"agent","id":"agent_1","version":2}` || *got.EnvironmentID != env || *got.Title != title || got.Metadata["k"] != "v" {
		t.Errorf("session read back as %+v", got)
	}
	if b, _ := json.Marshal(s2); !strings.Contains(string(b), `"agent":{"id":"agent_2","type":"agent"}`) {
		t.Errorf("an agent given by id is not answered as an object: %s", b)
	}
	wantCode(t, errOf(db.CreateSessionFrom(ctx, versions.SessionParams{Resources: []versions.AttachmentParams{{StoreID: a.ID}}, Agent: json.RawMessage(`{`)})), versions.CodeInvalid)

	ids := func(o versions.SessionListOptions) (out []string) {
		t.Helper()
		p, err := db.ListSessions(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Data {
			out = append(out, s.ID)
		}
		return out
	}
	if got := ids(versions.SessionListOptions{Newest: true}); len(got) != 2 || got[0] != s2.ID {
		t.Errorf("newest first = %v", got)
	}
	if got := ids(versions.SessionListOptions{MemoryStoreID: b.ID}); len(got) != 1 || got[0] != s2.ID {
		t.Errorf("attaching B = %v", got)
	}
	if got := ids(versions.SessionListOptions{CreatedGT: s1.CreatedAt}); len(got) != 1 || got[0] != s2.ID {
		t.Errorf("created after the first = %v", got)
	}
	p, err := db.ListSessions(ctx, versions.SessionListOptions{Newest: true, Limit: 1})
	if err != nil || p.NextPage == nil {
		t.Fatalf("first page %v, %v", p, err)
	}
	if got := ids(versions.SessionListOptions{Newest: true, Limit: 1, Page: *p.NextPage}); len(got) != 1 || got[0] != s1.ID {
		t.Errorf("second page newest first = %v", got)
	}

	newTitle, v2 := "renamed", "w"
	u, err := db.UpdateSession(ctx, s1.ID, versions.SessionUpdate{Title: &newTitle, Metadata: map[string]*string{"k": nil, "n": &v2}})
	if err != nil {
		t.Fatal(err)
	}
	if *u.Title != newTitle || len(u.Metadata) != 1 || u.Metadata["n"] != "w" || !u.UpdatedAt.After(s1.UpdatedAt) {
		t.Errorf("updated %+v", u)
	}
	arch, err := db.ArchiveSession(ctx, s1.ID)
	if err != nil || arch.ArchivedAt == nil {
		t.Fatalf("ArchiveSession = %+v, %v", arch, err)
	}
	wantCode(t, arch.CheckOpen(), versions.CodeConflict)
	if got := ids(versions.SessionListOptions{}); len(got) != 1 || got[0] != s2.ID {
		t.Errorf("archived session listed: %v", got)
	}
	if got := ids(versions.SessionListOptions{IncludeArchived: true}); len(got) != 2 {
		t.Errorf("with archived: %v", got)
	}
	if err := db.DeleteSession(ctx, s1.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, errOf(db.GetSession(ctx, s1.ID)), versions.CodeNotFound)
	wantCode(t, db.DeleteSession(ctx, s1.ID), versions.CodeNotFound)
}

// A scoped key keeps its stores and its read-only bit; deleting every one
// of its stores leaves it reaching nothing, never everything.
func TestScopedAPIKey(t *testing.T) {
	db := openDB(t)
	a, err := db.CreateStore(ctx, versions.StoreParams{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.CreateStore(ctx, versions.StoreParams{Name: "B"})
	if err != nil {
		t.Fatal(err)
	}
	k, secret, err := db.CreateScopedAPIKey(ctx, "agent", versions.APIKeyScope{StoreIDs: []string{a.ID, a.ID}, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.AuthenticateAPIKey(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if !got.ReadOnly || got.AllStores() || !got.Reaches(a.ID) || got.Reaches(b.ID) || len(got.StoreIDs) != 1 {
		t.Fatalf("authenticated scope %+v, want read-only, only %s", got.APIKeyScope, a.ID)
	}
	page, err := db.ListStores(ctx, versions.StoreListOptions{OnlyKey: k.ID})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != a.ID {
		t.Fatalf("ListStores for the key = %+v, %v, want only %s", page, err, a.ID)
	}
	wantCode(t, errOf3(db.CreateScopedAPIKey(ctx, "x", versions.APIKeyScope{StoreIDs: []string{"memstore_nope"}})), versions.CodeNotFound)
	if err := db.DeleteStore(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	got, err = db.AuthenticateAPIKey(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if got.AllStores() || got.Reaches(b.ID) {
		t.Fatalf("after its only store was deleted the key reaches %+v, want nothing", got.APIKeyScope)
	}
	keys, err := db.ListAPIKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].StoreIDs == nil || len(keys[0].StoreIDs) != 0 {
		t.Fatalf("ListAPIKeys = %+v, %v, want one scoped key with no stores", keys, err)
	}
}
