package httpapi_test

import (
	"bufio"
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

// pipeline writes raw to a new connection and reads every response the
// server sends until it closes the connection.
func pipeline(t *testing.T, url, raw string) []*http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	var out []*http.Response
	for {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the server kept the connection open after %d responses", len(out))
			}
			return out
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		res.Body = io.NopCloser(strings.NewReader(string(b)))
		out = append(out, res)
	}
}

// A request framed by both Content-Length and Transfer-Encoding is refused
// with 400 and its connection closed, so that nothing after it on the
// connection is read as a request; a request before it on the same
// connection is served.
func TestDoublyFramedRequest(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	before := snapshot(t, e.db)
	smuggled := "POST /v1/memory_stores HTTP/1.1\r\nHost: x\r\nx-api-key: " + e.key + "\r\n" +
		"Content-Type: application/json\r\n"
	body := `{"name":"Smuggled"}`
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	get := "GET /v1/memory_stores HTTP/1.1\r\nHost: x\r\nx-api-key: " + e.key + "\r\n\r\n"
	for _, tc := range []struct{ name, heads string }{
		{"CLThenTE", fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n", len(chunked))},
		{"TEThenCL", fmt.Sprintf("Transfer-Encoding: chunked\r\nContent-Length: %d\r\n", len(chunked))},
		{"OtherCase", "transfer-encoding: chunked\r\ncontent-length: 4\r\n"},
		{"ZeroLength", "Content-Length: 0\r\nTransfer-Encoding: chunked\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := pipeline(t, e.url, get+smuggled+tc.heads+"\r\n"+chunked+get)
			if len(res) != 2 {
				t.Fatalf("got %d responses, want 2 (the GET before, the 400; nothing after)", len(res))
			}
			if res[0].StatusCode != 200 {
				t.Errorf("the request before the doubly framed one got %d", res[0].StatusCode)
			}
			b, _ := io.ReadAll(res[1].Body)
			if res[1].StatusCode != 400 || !strings.Contains(string(b), `"invalid_request_error"`) || !strings.Contains(string(b), "Transfer-Encoding") {
				t.Errorf("the doubly framed request got %d %s, want 400 invalid_request_error", res[1].StatusCode, b)
			}
			if !res[1].Close {
				t.Error("the 400 does not say Connection: close")
			}
		})
	}
	t.Run("ChunkedAlone", func(t *testing.T) {
		res := pipeline(t, e.url, smuggled+"Transfer-Encoding: chunked\r\n\r\n"+chunked+strings.Replace(get, "\r\n\r\n", "\r\nConnection: close\r\n\r\n", 1))
		if len(res) != 2 || res[0].StatusCode != 200 || res[1].StatusCode != 200 {
			t.Fatalf("a chunked request and a GET after it: %d responses %v, want two 200", len(res), statuses(res))
		}
		var created struct{ ID string }
		b, _ := io.ReadAll(res[0].Body)
		if err := jsonUnmarshal(b, &created); err != nil {
			t.Fatal(err)
		}
		if err := e.db.DeleteStore(ctx, created.ID); err != nil {
			t.Fatal(err)
		}
	})
	if got := snapshot(t, e.db); got != before {
		t.Errorf("doubly framed requests changed the database:\n%s\nwant\n%s", got, before)
	}
}

func statuses(res []*http.Response) []int {
	var out []int
	for _, r := range res {
		out = append(out, r.StatusCode)
	}
	return out
}

// Invalid UTF-8 and lone surrogate escapes are refused with 400 in every
// string of a body (encoding/json would store U+FFFD), while a complete
// surrogate pair is the character it spells.
func TestLoneSurrogates(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	st, err := e.db.CreateStore(ctx, versions.StoreParams{Name: "Surrogates"})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, e.db)
	hdr := map[string]string{"x-api-key": e.key, "content-type": "application/json"}
	mems := "/v1/memory_stores/" + st.ID + "/memories"
	for _, tc := range []struct{ name, path, body string }{
		{"ContentHigh", mems, `{"path":"/a.md","content":"x\ud800y"}`},
		{"ContentLow", mems, `{"path":"/a.md","content":"\udc00"}`},
		{"ContentHighThenHigh", mems, `{"path":"/a.md","content":"\ud800\ud800"}`},
		{"ContentUpper", mems, `{"path":"/a.md","content":"\uD83D"}`},
		{"PathHigh", mems, `{"path":"/\ud800.md","content":"x"}`},
		{"StoreName", "/v1/memory_stores", `{"name":"\udfff"}`},
		{"MetadataKey", "/v1/memory_stores/" + st.ID, `{"metadata":{"\ud800":"v"}}`},
		{"InvalidUTF8", mems, "{\"path\":\"/a.md\",\"content\":\"\xff\xfe\"}"},
		{"MemoryTool", "/v1/memory_stores/" + st.ID + "/memory_tool", `{"command":"create","path":"/memories/a.md","file_text":"\ud800"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, b := rawRequest(t, e.url, "POST", tc.path, hdr, tc.body)
			if tc.name == "MemoryTool" {
				if res.StatusCode == 200 && !strings.Contains(string(b), `"is_error":true`) {
					t.Errorf("got %d %s, want refused", res.StatusCode, b)
				}
				return
			}
			if res.StatusCode != 400 || !strings.Contains(string(b), "invalid_request_error") {
				t.Errorf("got %d %s, want 400 invalid_request_error", res.StatusCode, b)
			}
		})
	}
	if got := snapshot(t, e.db); got != before {
		t.Errorf("refused requests changed the database:\n%s\nwant\n%s", got, before)
	}
	res, b := rawRequest(t, e.url, "POST", mems, hdr, `{"path":"/pair.md","content":"\ud83d\ude00 \\ud800"}`)
	if res.StatusCode != 200 || !strings.Contains(string(b), `"content_sha256":"`+sha256Hex("😀 \\ud800")+`"`) {
		t.Errorf("a surrogate pair and an escaped backslash got %d %s, want 200 with 😀 and a literal \\ud800", res.StatusCode, b)
	}
}

// A body that does not arrive by the read timeout is answered 408, even
// when the write timeout is as short as the read timeout (both run from
// the end of the request's head).
func TestSlowBody408(t *testing.T) {
	e := newEnv(t, httpapi.Options{ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
	st, err := e.db.CreateStore(ctx, versions.StoreParams{Name: "Slow"})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"path":"/slow.md","content":"never finished"}`
	res := pipeline(t, e.url, fmt.Sprintf("POST /v1/memory_stores/%s/memories HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nContent-Length: %d\r\n\r\n%s",
		st.ID, e.key, len(body), body[:10]))
	if len(res) != 1 || res[0].StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a slow body got %v, want one 408 and the connection closed", statuses(res))
	}
}
