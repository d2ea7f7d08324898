package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/versions"
)

// The /memfs/v1/ routes of a store as of any moment hold a key's scope: a
// store outside a scoped key is 404 as on /v1/, a scoped key forks
// nothing (a fork creates a store), and a read-only key reads the store
// as of a moment but takes no checkpoint.
func TestTimeTravelRoutesScope(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	by := versions.UserActor("t")
	mine, _ := e.db.CreateStore(ctx, versions.StoreParams{Name: "Mine"})
	other, _ := e.db.CreateStore(ctx, versions.StoreParams{Name: "Other"})
	for _, s := range []*versions.Store{mine, other} {
		if _, err := e.db.CreateMemory(ctx, s.ID, "/a.md", "one", by); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.CreateCheckpoint(ctx, s.ID, versions.CheckpointOptions{Name: "cp"}, by); err != nil {
			t.Fatal(err)
		}
	}
	_, scoped, err := e.db.CreateScopedAPIKey(ctx, "scoped", versions.APIKeyScope{StoreIDs: []string{mine.ID}})
	if err != nil {
		t.Fatal(err)
	}
	_, ro, err := e.db.CreateScopedAPIKey(ctx, "ro", versions.APIKeyScope{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	call := func(key, method, path string, body any) (int, map[string]any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, e.url+path, bytes.NewReader(b))
		if body == nil {
			req, _ = http.NewRequest(method, e.url+path, nil)
		}
		req.Header.Set("x-api-key", key)
		req.Header.Set("content-type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	for _, tc := range []struct {
		name, key, method, path string
		body                    any
		want                    int
	}{
		{"ScopedOwnAsOf", scoped, "GET", "/memfs/v1/memory_stores/" + mine.ID + "/as_of?when=cp", nil, 200},
		{"ScopedOtherAsOf", scoped, "GET", "/memfs/v1/memory_stores/" + other.ID + "/as_of?when=cp", nil, 404},
		{"ScopedOtherCheckpoints", scoped, "GET", "/memfs/v1/memory_stores/" + other.ID + "/checkpoints", nil, 404},
		{"ScopedOtherRestore", scoped, "POST", "/memfs/v1/memory_stores/" + other.ID + "/restore", map[string]any{"as_of": "cp"}, 404},
		{"ScopedFork", scoped, "POST", "/memfs/v1/memory_stores/" + mine.ID + "/fork", map[string]any{"name": "f"}, 403},
		{"ScopedSessionUndo", scoped, "POST", "/memfs/v1/sessions/sesn_01X/undo", map[string]any{}, 403},
		{"ReadOnlyAsOf", ro, "GET", "/memfs/v1/memory_stores/" + other.ID + "/as_of?when=cp&view=full", nil, 200},
		{"ReadOnlyCheckpoint", ro, "POST", "/memfs/v1/memory_stores/" + other.ID + "/checkpoints", map[string]any{"name": "x"}, 403},
		{"ReadOnlyFork", ro, "POST", "/memfs/v1/memory_stores/" + other.ID + "/fork", map[string]any{"name": "f"}, 403},
		{"BadWhen", e.key, "GET", "/memfs/v1/memory_stores/" + mine.ID + "/as_of?when=2001-01-01", nil, 400},
		{"ForkTakenName", e.key, "POST", "/memfs/v1/memory_stores/" + mine.ID + "/fork", map[string]any{"name": "Other"}, 409},
		{"Fork", e.key, "POST", "/memfs/v1/memory_stores/" + mine.ID + "/fork", map[string]any{"name": "Fork", "as_of": "cp", "with_history": true}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, body := call(tc.key, tc.method, tc.path, tc.body); got != tc.want {
				t.Errorf("%s %s: %d, want %d: %v", tc.method, tc.path, got, tc.want, body)
			}
		})
	}
	if list, err := e.db.ListCheckpoints(ctx, other.ID); err != nil || len(list) != 1 {
		t.Errorf("checkpoints of the other store: %+v, %v", list, err)
	}
}
