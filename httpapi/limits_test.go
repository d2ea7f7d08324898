package httpapi_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/versions"
)

// holdSlot starts a request that holds a slot: its body never finishes
// until the read timeout.
func holdSlot(t *testing.T, e *env, storeID string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /v1/memory_stores/%s/memories HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nContent-Length: 100\r\n\r\n{", storeID, e.key)
	time.Sleep(100 * time.Millisecond) // until the server has taken it in
	return conn
}

func TestOverload(t *testing.T) {
	t.Run("Busy", func(t *testing.T) {
		e := newEnv(t, httpapi.Options{MaxInFlight: 1, QueueWait: 50 * time.Millisecond, ReadTimeout: 3 * time.Second})
		st, err := e.db.CreateStore(ctx, versions.StoreParams{Name: "Busy"})
		if err != nil {
			t.Fatal(err)
		}
		holdSlot(t, e, st.ID)
		res, body := rawRequest(t, e.url, "GET", "/v1/memory_stores/"+st.ID, map[string]string{"x-api-key": e.key}, "")
		if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), httpapi.TypeOverloaded) {
			t.Fatalf("with every slot taken: %d %s", res.StatusCode, body)
		}
		if res.Header.Get("retry-after") == "" || res.Header.Get("x-should-retry") != "true" {
			t.Errorf("a 503 without retry-after or x-should-retry: %v", res.Header)
		}
	})
	t.Run("PerKey", func(t *testing.T) {
		e := newEnv(t, httpapi.Options{MaxPerKey: 1, ReadTimeout: 3 * time.Second})
		st, err := e.db.CreateStore(ctx, versions.StoreParams{Name: "Greedy"})
		if err != nil {
			t.Fatal(err)
		}
		holdSlot(t, e, st.ID)
		res, body := rawRequest(t, e.url, "GET", "/v1/memory_stores/"+st.ID, map[string]string{"x-api-key": e.key}, "")
		if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), httpapi.TypeRateLimit) {
			t.Fatalf("a key over its share: %d %s", res.StatusCode, body)
		}
		k2, secret, err := e.db.CreateAPIKey(ctx, "other")
		if err != nil {
			t.Fatal(err)
		}
		if res, body := rawRequest(t, e.url, "GET", "/v1/memory_stores/"+st.ID, map[string]string{"x-api-key": secret}, ""); res.StatusCode != 200 {
			t.Errorf("another key (%s) was refused too: %d %s", k2.ID, res.StatusCode, body)
		}
	})
}

func TestMetrics(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	key := map[string]string{"x-api-key": e.key}
	res, body := rawRequest(t, e.url, "POST", "/v1/memory_stores", key, `{"name":"M"}`)
	if res.StatusCode != 200 {
		t.Fatal(res.StatusCode, string(body))
	}
	var st versions.Store
	if err := jsonUnmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	mems := "/v1/memory_stores/" + st.ID + "/memories"
	rawRequest(t, e.url, "POST", mems, key, `{"path":"/a.md","content":"x"}`)
	rawRequest(t, e.url, "POST", mems, key, `{"path":"/a.md","content":"y"}`)
	rawRequest(t, e.url, "GET", mems, nil, "")
	res, err := http.Get(e.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`memfs_http_requests_total{code="200",route="POST /v1/memory_stores/{memory_store_id}/memories"} 1`,
		`memfs_http_requests_total{code="409",route="POST /v1/memory_stores/{memory_store_id}/memories"} 1`,
		`memfs_http_requests_total{code="401",route="GET /v1/memory_stores/{memory_store_id}/memories"} 1`,
		`memfs_http_request_duration_seconds_count{route="POST /v1/memory_stores"} 1`,
		`memfs_saves_total{kind="create"} 1`,
		`memfs_refusals_total{reason="path_conflict"} 1`,
		`memfs_refusals_total{reason="authentication_error"} 1`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
