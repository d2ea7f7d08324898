package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/versions"
)

// searchGet calls the search route with key and returns the status and
// the decoded body.
func searchGet(t *testing.T, e *env, key, storeID string, params url.Values) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url+"/memfs/v1/memory_stores/"+url.PathEscape(storeID)+"/search?"+params.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("%d %s: %v", resp.StatusCode, b, err)
	}
	return resp.StatusCode, body
}

// The search route answers search_result pages for the stores a key
// reaches, 404 for the others as for an unknown store, and 400 for a query
// the grammar cannot read.
func TestSearchRoute(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	by := versions.Actor{Type: "user_actor", ID: "t"}
	mine, err := e.db.CreateStore(ctx, versions.StoreParams{Name: "Mine"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.db.CreateStore(ctx, versions.StoreParams{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ store, path, content string }{
		{mine.ID, "/laptop.md", "RAM: 32 GB\nthe laptop is new\n"},
		{mine.ID, "/bag.md", "a laptop bag\n"},
		{other.ID, "/laptop.md", "laptop of the other store\n"},
	} {
		if _, err := e.db.CreateMemory(ctx, m.store, m.path, m.content, by); err != nil {
			t.Fatal(err)
		}
	}
	_, scoped, err := e.db.CreateScopedAPIKey(ctx, "scoped", versions.APIKeyScope{StoreIDs: []string{mine.ID}, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}

	code, body := searchGet(t, e, scoped, mine.ID, url.Values{"q": {"laptop"}})
	data, _ := body["data"].([]any)
	if code != http.StatusOK || len(data) != 2 {
		t.Fatalf("%d %v", code, body)
	}
	first := data[0].(map[string]any)
	if first["type"] != "search_result" || first["path"] != "/laptop.md" || first["memory_store_id"] != mine.ID {
		t.Fatalf("first result %v", first)
	}
	lines := first["lines"].([]any)
	if l := lines[0].(map[string]any); l["line"] != float64(2) || l["text"] != "the laptop is new" {
		t.Fatalf("lines %v", lines)
	}
	if code, body := searchGet(t, e, scoped, other.ID, url.Values{"q": {"laptop"}}); code != http.StatusNotFound {
		t.Fatalf("another store with a scoped key: %d %v", code, body)
	}
	if code, body := searchGet(t, e, e.key, other.ID, url.Values{"q": {"laptop"}}); code != http.StatusOK || len(body["data"].([]any)) != 1 {
		t.Fatalf("a key of every store: %d %v", code, body)
	}
	for _, q := range []url.Values{{"q": {`"unclosed`}}, {"q": {"-laptop"}}, {}, {"q": {"laptop"}, "limit": {"0"}}, {"q": {"laptop"}, "history": {"maybe"}}} {
		code, body := searchGet(t, e, e.key, mine.ID, q)
		errObj, _ := body["error"].(map[string]any)
		if code != http.StatusBadRequest || errObj["type"] != "invalid_request_error" {
			t.Errorf("%v: %d %v", q, code, body)
		}
	}
}
