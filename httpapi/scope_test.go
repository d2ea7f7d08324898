package httpapi_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

// scopedClient makes a key of the given scope and an SDK client using it.
func scopedClient(t *testing.T, e *env, scope versions.APIKeyScope) anthropic.Client {
	t.Helper()
	_, secret, err := e.db.CreateScopedAPIKey(ctx, "scoped", scope)
	if err != nil {
		t.Fatal(err)
	}
	return anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(secret), option.WithMaxRetries(0))
}

// A scoped key lists and reaches only its stores: every route on another
// store answers 404 not_found_error exactly as for a store that does not
// exist; it creates no stores and reaches no sessions.
func TestScopedKeyReachesOnlyItsStores(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	mine, err := e.db.CreateStore(ctx, versions.StoreParams{Name: "Mine"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.db.CreateStore(ctx, versions.StoreParams{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	otherMem, err := e.db.CreateMemory(ctx, other.ID, "/secret.md", "the other store's", versions.Actor{Type: "user_actor", ID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	c := scopedClient(t, e, versions.APIKeyScope{StoreIDs: []string{mine.ID}})
	ms := c.Beta.MemoryStores

	page, err := ms.List(ctx, anthropic.BetaMemoryStoreListParams{IncludeArchived: param.NewOpt(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != mine.ID {
		t.Errorf("the scoped key lists %d stores, want only %s", len(page.Data), mine.ID)
	}
	m, err := ms.Memories.New(ctx, mine.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/mine.md", Content: param.NewOpt("ok")})
	if err != nil {
		t.Fatalf("the scoped key cannot write its own store: %v", err)
	}
	if _, err := ms.Memories.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: mine.ID}); err != nil {
		t.Fatal(err)
	}

	// What the server answers for a store that does not exist, with a
	// key of every store.
	const ghost = "memstore_01ZZZZZZZZZZZZZZZZZZZZZZZZ"
	_, err = e.client.Beta.MemoryStores.Get(ctx, ghost, anthropic.BetaMemoryStoreGetParams{})
	want := wantAPIError(t, err, http.StatusNotFound, httpapi.TypeNotFound)

	for name, call := range map[string]func() error{
		"Get": func() error { _, err := ms.Get(ctx, other.ID, anthropic.BetaMemoryStoreGetParams{}); return err },
		"Update": func() error {
			_, err := ms.Update(ctx, other.ID, anthropic.BetaMemoryStoreUpdateParams{Name: param.NewOpt("x")})
			return err
		},
		"Delete": func() error { _, err := ms.Delete(ctx, other.ID, anthropic.BetaMemoryStoreDeleteParams{}); return err },
		"Archive": func() error {
			_, err := ms.Archive(ctx, other.ID, anthropic.BetaMemoryStoreArchiveParams{})
			return err
		},
		"ListMemories": func() error {
			_, err := ms.Memories.List(ctx, other.ID, anthropic.BetaMemoryStoreMemoryListParams{})
			return err
		},
		"GetMemory": func() error {
			_, err := ms.Memories.Get(ctx, otherMem.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: other.ID})
			return err
		},
		"CreateMemory": func() error {
			_, err := ms.Memories.New(ctx, other.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/x.md", Content: param.NewOpt("x")})
			return err
		},
		"UpdateMemory": func() error {
			_, err := ms.Memories.Update(ctx, otherMem.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: other.ID, Content: param.NewOpt("x")})
			return err
		},
		"DeleteMemory": func() error {
			_, err := ms.Memories.Delete(ctx, otherMem.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: other.ID})
			return err
		},
		"ListVersions": func() error {
			_, err := ms.MemoryVersions.List(ctx, other.ID, anthropic.BetaMemoryStoreMemoryVersionListParams{})
			return err
		},
		"GetVersion": func() error {
			_, err := ms.MemoryVersions.Get(ctx, otherMem.VersionID, anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: other.ID})
			return err
		},
		"Redact": func() error {
			_, err := ms.MemoryVersions.Redact(ctx, otherMem.VersionID, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: other.ID})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := wantAPIError(t, call(), http.StatusNotFound, httpapi.TypeNotFound)
			if wantMsg := replaceID(want.Message, ghost, other.ID); got.Message != wantMsg {
				t.Errorf("out of scope: %q, want what an unknown store gets: %q", got.Message, wantMsg)
			}
		})
	}
	t.Run("MemoryTool", func(t *testing.T) {
		res, b := rawRequest(t, toolServer(t, e), "POST", "/v1/memory_stores/"+other.ID+"/memory_tool", map[string]string{"x-api-key": keyOf(t, e, versions.APIKeyScope{StoreIDs: []string{mine.ID}})},
			`{"command":"view","path":"/memories/secret.md"}`)
		if res.StatusCode != http.StatusNotFound || contains(string(b), "the other store's") {
			t.Errorf("the memory tool on another store: %d %s, want 404", res.StatusCode, b)
		}
	})
	t.Run("CreateStore", func(t *testing.T) {
		_, err := ms.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "Mine Too"})
		wantAPIError(t, err, http.StatusForbidden, "permission_error")
	})
	t.Run("Sessions", func(t *testing.T) {
		_, err := c.Beta.Sessions.New(ctx, anthropic.BetaSessionNewParams{EnvironmentID: "env_1",
			Resources: []anthropic.BetaSessionNewParamsResourceUnion{{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{MemoryStoreID: mine.ID}}}})
		wantAPIError(t, err, http.StatusForbidden, "permission_error")
		_, err = c.Beta.Sessions.List(ctx, anthropic.BetaSessionListParams{})
		wantAPIError(t, err, http.StatusForbidden, "permission_error")
	})
	if got, err := e.db.GetMemory(ctx, other.ID, otherMem.ID); err != nil || got.Content == nil || *got.Content != "the other store's" {
		t.Errorf("the other store's memory after the scoped key's attempts: %+v, %v", got, err)
	}
}

// A read-only key reads everything its scope reaches and gets 403
// permission_error on every change.
func TestReadOnlyKey(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	st, err := e.db.CreateStore(ctx, versions.StoreParams{Name: "Read Me"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.db.CreateMemory(ctx, st.ID, "/a.md", "one", versions.Actor{Type: "user_actor", ID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, e.db)
	c := scopedClient(t, e, versions.APIKeyScope{ReadOnly: true})
	ms := c.Beta.MemoryStores
	if page, err := ms.List(ctx, anthropic.BetaMemoryStoreListParams{}); err != nil || len(page.Data) != 1 {
		t.Fatalf("a read-only key of every store lists %v, %v", page, err)
	}
	if got, err := ms.Memories.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: st.ID}); err != nil || got.Content != "one" {
		t.Fatalf("a read-only key reads %v, %v", got, err)
	}
	if _, err := c.Beta.Sessions.List(ctx, anthropic.BetaSessionListParams{}); err != nil {
		t.Fatalf("a read-only key of every store lists sessions: %v", err)
	}
	for name, call := range map[string]func() error{
		"CreateStore": func() error { _, err := ms.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "x"}); return err },
		"UpdateStore": func() error {
			_, err := ms.Update(ctx, st.ID, anthropic.BetaMemoryStoreUpdateParams{Name: param.NewOpt("x")})
			return err
		},
		"Archive":     func() error { _, err := ms.Archive(ctx, st.ID, anthropic.BetaMemoryStoreArchiveParams{}); return err },
		"DeleteStore": func() error { _, err := ms.Delete(ctx, st.ID, anthropic.BetaMemoryStoreDeleteParams{}); return err },
		"CreateMemory": func() error {
			_, err := ms.Memories.New(ctx, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/b.md", Content: param.NewOpt("x")})
			return err
		},
		"UpdateMemory": func() error {
			_, err := ms.Memories.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: st.ID, Content: param.NewOpt("x")})
			return err
		},
		"DeleteMemory": func() error {
			_, err := ms.Memories.Delete(ctx, m.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: st.ID})
			return err
		},
		"Redact": func() error {
			_, err := ms.MemoryVersions.Redact(ctx, m.VersionID, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: st.ID})
			return err
		},
		"CreateSession": func() error {
			_, err := c.Beta.Sessions.New(ctx, anthropic.BetaSessionNewParams{EnvironmentID: "env_1",
				Resources: []anthropic.BetaSessionNewParamsResourceUnion{{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{MemoryStoreID: st.ID}}}})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			wantAPIError(t, call(), http.StatusForbidden, "permission_error")
		})
	}
	t.Run("MemoryTool", func(t *testing.T) {
		res, b := rawRequest(t, toolServer(t, e), "POST", "/v1/memory_stores/"+st.ID+"/memory_tool", map[string]string{"x-api-key": keyOf(t, e, versions.APIKeyScope{ReadOnly: true})},
			`{"command":"delete","path":"/memories/a.md"}`)
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("the memory tool with a read-only key: %d %s, want 403", res.StatusCode, b)
		}
	})
	if snapshot(t, e.db) != before {
		t.Error("a read-only key changed the database")
	}
}

func keyOf(t *testing.T, e *env, scope versions.APIKeyScope) string {
	t.Helper()
	_, secret, err := e.db.CreateScopedAPIKey(ctx, "scoped", scope)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

func replaceID(s, old, new string) string { return strings.Replace(s, old, new, 1) }

// toolServer serves e's database with the memory tool's route added, as
// memfs serve does, and returns its URL.
func toolServer(t *testing.T, e *env) string {
	t.Helper()
	srv := httpapi.New(e.db, httpapi.Options{})
	srv.Handle("POST /v1/memory_stores/{id}/memory_tool", memtool.HTTPHandler(e.db, httpapi.Actor))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln, "", "") }()
	t.Cleanup(func() {
		stop()
		<-done
	})
	return "http://" + ln.Addr().String()
}
