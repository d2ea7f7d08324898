package httpapi_test

// Hostile HTTP: each request gets a clear 4xx in the API's error envelope,
// nothing in the database changes, and the server keeps serving.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/versions"
)

// snapshot is everything the database holds that a request could change.
func snapshot(t *testing.T, db *versions.DB) string {
	t.Helper()
	stores, err := db.ListStores(ctx, versions.StoreListOptions{IncludeArchived: true, Limit: versions.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	all := []any{stores}
	for _, s := range stores.Data {
		mems, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{View: versions.ViewFull})
		if err != nil {
			t.Fatal(err)
		}
		vers, err := db.ListVersions(ctx, s.ID, versions.VersionListOptions{View: versions.ViewFull})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, mems, vers)
	}
	sess, err := db.ListSessions(ctx, versions.SessionListOptions{IncludeArchived: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(append(all, sess))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rawRequest sends exactly the request line, headers and body given (no
// client-side cleaning of the path) and returns the response.
func rawRequest(t *testing.T, url, method, path string, header map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var req strings.Builder
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: memfs\r\nConnection: close\r\nContent-Length: %d\r\n", method, path, len(body))
	for k, v := range header {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n" + body)
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func TestHostileHTTP(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	st, err := e.db.CreateStore(ctx, versions.StoreParams{Name: "Target", MaxMemoryBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.db.CreateMemory(ctx, st.ID, "/notes/a.md", "keep me", versions.UserActor("setup"))
	if err != nil {
		t.Fatal(err)
	}
	stores := "/v1/memory_stores"
	mems := stores + "/" + st.ID + "/memories"
	one := mems + "/" + m.ID
	key := map[string]string{"x-api-key": e.key, "Content-Type": "application/json"}
	noKey := map[string]string{"Content-Type": "application/json"}

	cases := []struct {
		name, method, path string
		header             map[string]string
		body               string
		status             int
	}{
		{"malformed JSON", "POST", stores, key, `{"name": "x"`, 400},
		{"not JSON", "POST", stores, key, `name=x`, 400},
		{"unknown field", "POST", stores, key, `{"name":"x","owner":"me"}`, 400},
		{"wrong type", "POST", stores, key, `{"name":5}`, 400},
		{"wrong type nested", "POST", one, key, `{"precondition":{"type":"content_sha256","content_sha256":7}}`, 400},
		{"array body", "POST", stores, key, `[{"name":"x"}]`, 400},
		{"two values", "POST", stores, key, `{"name":"x"}{"name":"y"}`, 400},
		{"empty body", "POST", stores, key, ``, 400},
		{"invalid UTF-8", "POST", mems, key, "{\"path\":\"/b.md\",\"content\":\"\xff\xfe\"}", 400},
		{"missing content", "POST", mems, key, `{"path":"/b.md"}`, 400},
		{"oversized store body", "POST", stores, key, `{"name":"` + strings.Repeat("x", 300<<10) + `"}`, 413},
		{"oversized memory body", "POST", mems, key, `{"path":"/b.md","content":"` + strings.Repeat("x", 20000) + `"}`, 413},
		{"memory over the store's limit", "POST", mems, key, `{"path":"/b.md","content":"` + strings.Repeat("x", 1001) + `"}`, 413},
		{"update over the limit", "POST", one, key, `{"content":"` + strings.Repeat("x", 1001) + `"}`, 413},
		{"bad store id", "GET", stores + "/abc", key, "", 400},
		{"unknown store", "GET", stores + "/memstore_01NOTTHERE", key, "", 404},
		{"store id with a quote", "GET", stores + "/memstore_%22%3B", key, "", 400},
		{"memory id as a path", "GET", mems + "/%2Fnotes%2Fa.md", key, "", 400},
		{"unknown memory", "DELETE", mems + "/mem_01NOTTHERE", key, "", 404},
		{"bad version id", "POST", stores + "/" + st.ID + "/memory_versions/v1/redact", key, "", 400},
		{"dot-dot", "GET", stores + "/../v1/memory_stores", key, "", 400},
		{"dot-dot in an id's place", "DELETE", mems + "/..", key, "", 400},
		{"encoded dot-dot", "DELETE", stores + "/%2e%2e/" + st.ID, key, "", 400},
		{"encoded dot-dot upper case", "GET", mems + "/%2E%2E/%2E%2E", key, "", 400},
		{"encoded slash and dot-dot", "DELETE", mems + "/..%2F..%2F" + m.ID, key, "", 400},
		{"dot", "GET", stores + "/./" + st.ID, key, "", 400},
		{"empty segment", "GET", stores + "//" + st.ID, key, "", 400},
		{"traversal in a memory path", "POST", mems, key, `{"path":"/notes/../../etc/passwd","content":"x"}`, 400},
		{"relative memory path", "POST", mems, key, `{"path":"notes/b.md","content":"x"}`, 400},
		{"rename by traversal", "POST", one, key, `{"path":"/notes/../a.md"}`, 400},
		{"huge limit", "GET", stores + "?limit=1000000000000", key, "", 400},
		{"negative limit", "GET", mems + "?limit=-1", key, "", 400},
		{"limit not a number", "GET", mems + "?limit=ten", key, "", 400},
		{"bad cursor", "GET", mems + "?page=%00%01", key, "", 400},
		{"forged cursor", "GET", stores + "/" + st.ID + "/memory_versions?page=czk5OTk5OTk5OTk5OTk5OTk5OTk5", key, "", 400},
		{"cursor of another listing", "GET", mems + "?page=czE", key, "", 400},
		{"bad view", "GET", one + "?view=everything", key, "", 400},
		{"bad depth", "GET", mems + "?depth=-1", key, "", 400},
		{"bad boolean", "GET", stores + "?include_archived=yes", key, "", 400},
		{"bad time", "GET", stores + "?created_at%5Bgte%5D=yesterday", key, "", 400},
		{"repeated parameter", "GET", mems + "?limit=1&limit=2", key, "", 400},
		{"bad precondition type", "POST", one, key, `{"content":"x","precondition":{"type":"etag","content_sha256":"abc"}}`, 400},
		{"precondition not a hash", "POST", one, key, `{"content":"x","precondition":{"type":"content_sha256","content_sha256":"' OR 1=1 --"}}`, 400},
		{"failed precondition", "POST", one, key, `{"content":"x","precondition":{"type":"content_sha256","content_sha256":"` + strings.Repeat("0", 64) + `"}}`, 409},
		{"delete with a wrong hash", "DELETE", one + "?expected_content_sha256=" + strings.Repeat("a", 64), key, "", 409},
		{"session of another resource type", "POST", "/v1/sessions", key, `{"environment_id":"e","resources":[{"type":"file","file_id":"f"}]}`, 400},
		{"session with an unknown resource field", "POST", "/v1/sessions", key, `{"resources":[{"type":"memory_store","memory_store_id":"` + st.ID + `","mount":"/"}]}`, 400},
		{"session with too many stores", "POST", "/v1/sessions", key, `{"resources":[` + strings.TrimSuffix(strings.Repeat(`{"type":"memory_store","memory_store_id":"`+st.ID+`"},`, 9), ",") + `]}`, 400},
		{"session with long instructions", "POST", "/v1/sessions", key, `{"resources":[{"type":"memory_store","memory_store_id":"` + st.ID + `","instructions":"` + strings.Repeat("i", 4097) + `"}]}`, 400},
		{"no key", "POST", stores, noKey, `{"name":"x"}`, 401},
		{"wrong key", "POST", stores, map[string]string{"x-api-key": "sk-memfs-wrong"}, `{"name":"x"}`, 401},
		{"malformed bearer", "GET", stores, map[string]string{"Authorization": "Basic abc"}, "", 401},
		{"unknown route", "GET", "/v1/files", key, "", 404},
		{"method not allowed", "PUT", one, key, `{"content":"x"}`, 405},
	}
	before := snapshot(t, e.db)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, body := rawRequest(t, e.url, c.method, c.path, c.header, c.body)
			if res.StatusCode != c.status {
				t.Errorf("status %d, want %d: %s", res.StatusCode, c.status, body)
			}
			var env httpapi.Body
			if err := json.Unmarshal(body, &env); err != nil || env.Type != "error" || env.Error.Type == "" || env.Error.Message == "" {
				t.Errorf("not the API's error envelope: %s", body)
			}
			if res.Header.Get("request-id") == "" {
				t.Error("no request-id header")
			}
			if after := snapshot(t, e.db); after != before {
				t.Fatalf("the request changed the database")
			}
			alive, _ := rawRequest(t, e.url, "GET", one, key, "")
			if alive.StatusCode != 200 {
				t.Fatalf("the server stopped serving: %d", alive.StatusCode)
			}
		})
	}
}

// Slow clients are cut off by the server's timeouts without holding a
// request slot or changing anything, and others are served meanwhile.
func TestSlowClients(t *testing.T) {
	e := newEnv(t, httpapi.Options{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, MaxInFlight: 1})
	st, err := e.db.CreateStore(ctx, versions.StoreParams{Name: "Slow"})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, e.db)
	addr := strings.TrimPrefix(e.url, "http://")

	t.Run("Headers", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, "POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\n")
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		start := time.Now()
		b, _ := io.ReadAll(conn) // the server closes the connection
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("a client that never finished its headers was held %v", d)
		}
		if len(b) > 0 && !strings.HasPrefix(string(b), "HTTP/1.1 4") {
			t.Errorf("answered %q", b)
		}
	})

	t.Run("Body", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := `{"path":"/slow.md","content":"never finished"}`
		fmt.Fprintf(conn, "POST /v1/memory_stores/%s/memories HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nContent-Length: %d\r\n\r\n%s",
			st.ID, e.key, len(body), body[:10])
		// Meanwhile another client is served: the slow one holds the
		// only slot for at most the read timeout.
		res, _ := rawRequest(t, e.url, "GET", "/v1/memory_stores/"+st.ID, map[string]string{"x-api-key": e.key}, "")
		if res.StatusCode != 200 {
			t.Errorf("another client got %d while a slow one sent its body", res.StatusCode)
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		res, err = http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer to a slow body: %v", err)
		}
		if res.StatusCode != http.StatusRequestTimeout {
			t.Errorf("a slow body got %d, want 408", res.StatusCode)
		}
	})
	if snapshot(t, e.db) != before {
		t.Error("slow clients changed the database")
	}
	if !reflect.DeepEqual(before, snapshot(t, e.db)) {
		t.Error("unstable snapshot")
	}
}
