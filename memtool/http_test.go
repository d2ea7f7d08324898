package memtool_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

// TestHTTPHandler serves the handler on a real listener, behind a stand-in
// for the API server's authentication and error mapping, which memfs serve
// provides in production.
func TestHTTPHandler(t *testing.T) {
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{})
	sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: st.ID}})
	if err != nil {
		t.Fatal(err)
	}
	h := memtool.HTTPHandler(db, func(r *http.Request) versions.Actor {
		return versions.Actor{Type: "api_actor", ID: r.Header.Get("x-api-key")}
	})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/memory_stores/{id}/memory_tool", func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			status := http.StatusInternalServerError
			switch versions.ErrorCode(err) {
			case versions.CodeNotFound:
				status = http.StatusNotFound
			case versions.CodeInvalid, versions.CodeTooLarge:
				status = http.StatusBadRequest
			case versions.CodeConflict:
				status = http.StatusConflict
			}
			http.Error(w, err.Error(), status)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	post := func(store, session, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/memory_stores/"+store+"/memory_tool", strings.NewReader(body))
		req.Header.Set("x-api-key", "apikey_1")
		if session != "" {
			req.Header.Set(memtool.SessionHeader, session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}

	code, out := post(st.ID, "", `{"command":"create","path":"/memories/g.xml","file_text":"<guidelines>\n"}`)
	if code != 200 || out["type"] != "tool_result" || out["content"] != "File created successfully at: /memories/g.xml" || out["is_error"] != false {
		t.Errorf("create: %d %v", code, out)
	}
	code, out = post(st.ID, sess.ID, `{"command":"str_replace","path":"/memories/g.xml","old_str":"<guidelines>","new_str":"<guidelines/>"}`)
	if code != 200 || out["is_error"] != false || !strings.Contains(out["content"].(string), "     1\t<guidelines/>") {
		t.Errorf("str_replace for a session: %d %v", code, out)
	}
	code, out = post(st.ID, "", `{"command":"delete","path":"/memories/nope"}`)
	if code != 200 || out["content"] != "Error: The path /memories/nope does not exist" || out["is_error"] != true {
		t.Errorf("a failed command is a 200 tool_result with is_error: %d %v", code, out)
	}
	if code, _ := post("memstore_nope", "", `{"command":"view","path":"/memories"}`); code != http.StatusNotFound {
		t.Errorf("unknown store: %d, want 404", code)
	}
	if code, _ := post(st.ID, "sesn_nope", `{"command":"view","path":"/memories"}`); code != http.StatusNotFound {
		t.Errorf("unknown session: %d, want 404", code)
	}
	if code, _ := post(st.ID, "", `view /memories`); code != http.StatusBadRequest {
		t.Errorf("a body that is not JSON: %d, want 400", code)
	}

	page, err := db.ListVersions(ctx, st.ID, versions.VersionListOptions{})
	if err != nil || len(page.Data) != 2 {
		t.Fatalf("versions: %v, %v", page, err)
	}
	if by := page.Data[1].CreatedBy; by == nil || *by != (versions.Actor{Type: "api_actor", ID: "apikey_1"}) {
		t.Errorf("the create is by %+v, want the API key", by)
	}
	if by := page.Data[0].CreatedBy; by == nil || *by != (versions.Actor{Type: "session_actor", ID: sess.ID, Via: "apikey_1"}) {
		t.Errorf("the str_replace is by %+v, want session %s", by, sess.ID)
	}
}
