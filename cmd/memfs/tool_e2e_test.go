package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

// toolResult is one line memfs tool writes.
type toolResult struct {
	Type    string `json:"type"`
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}

// tool pipes JSON lines through `memfs tool ARGS` and decodes its answers.
func (e *e2eEnv) tool(t *testing.T, lines []string, args ...string) []toolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, memfsBin, append([]string{"tool"}, args...)...)
	cmd.Env = e.environ()
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// Exit 6 says a change was refused as read-only to the session; the
	// results are there all the same.
	if err != nil && cmd.ProcessState.ExitCode() != exitReadOnly {
		t.Fatalf("memfs tool %v: %v\n%s", args, err, stderr.String())
	}
	var res []toolResult
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var r toolResult
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("memfs tool output %q: %v", out, err)
		}
		if r.Type != "tool_result" {
			t.Errorf("memfs tool wrote type %q, want tool_result", r.Type)
		}
		res = append(res, r)
	}
	if len(res) != len(lines) {
		t.Fatalf("memfs tool answered %d of %d lines: %q", len(res), len(lines), out)
	}
	return res
}

// TestToolCLIAndMount: memories written with `memfs tool` are read and
// changed through a mount of the same store, and what the mount writes is
// seen and edited by the tool; the history names the session for the
// tool's writes and says what each one did.
func TestToolCLIAndMount(t *testing.T) {
	env := newE2EEnv(t)
	store, slug := env.createStore(t, "Tool Shared")
	toolSess := strings.TrimSpace(env.cli(t, "session", "create", "--store", store))
	mountSess := strings.TrimSpace(env.cli(t, "session", "create", "--store", store))
	mnt := mountDir(t)
	env.startMount(t, mnt, "--session", mountSess)
	dir := filepath.Join(mnt, slug)

	res := env.tool(t, []string{
		`{"command":"create","path":"/memories/plan.md","file_text":"# Plan\n- step one\n"}`,
		`{"command":"create","path":"/memories/plan.md","file_text":"again"}`,
		`{"command":"view","path":"/memories"}`,
	}, store, "--session", toolSess)
	wantResults(t, res,
		toolResult{Content: "File created successfully at: /memories/plan.md"},
		toolResult{Content: "Error: File /memories/plan.md already exists", IsError: true},
		toolResult{Content: "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories\n18B\t/memories/plan.md"},
	)

	// The mount sees the tool's memory, and changes it like any file.
	if _, ok := waitContent(filepath.Join(dir, "plan.md"), "# Plan\n- step one\n", time.Now(), 5*time.Second); !ok {
		t.Fatalf("the mount does not show plan.md as the tool wrote it")
	}
	sh(t, dir, `printf -- '- step two\n' >> plan.md && mkdir -p notes && printf 'from the mount' > notes/m.txt`)

	res = env.tool(t, []string{
		`{"command":"view","path":"/memories/plan.md"}`,
		`{"command":"view","path":"/memories/notes/m.txt"}`,
		`{"command":"str_replace","path":"/memories/notes/m.txt","old_str":"mount","new_str":"mount, edited by the tool"}`,
		`{"command":"rename","old_path":"/memories/plan.md","new_path":"/memories/done/plan.md"}`,
	}, store, "--session", toolSess)
	wantResults(t, res,
		toolResult{Content: "Here's the content of /memories/plan.md with line numbers:\n     1\t# Plan\n     2\t- step one\n     3\t- step two\n     4\t"},
		toolResult{Content: "Here's the content of /memories/notes/m.txt with line numbers:\n     1\tfrom the mount"},
		toolResult{Content: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tfrom the mount, edited by the tool"},
		toolResult{Content: "Successfully renamed /memories/plan.md to /memories/done/plan.md"},
	)
	if _, ok := waitContent(filepath.Join(dir, "notes", "m.txt"), "from the mount, edited by the tool", time.Now(), 5*time.Second); !ok {
		t.Errorf("the mount does not show the tool's edit of notes/m.txt")
	}
	if _, ok := waitContent(filepath.Join(dir, "done", "plan.md"), "# Plan\n- step one\n- step two\n", time.Now(), 5*time.Second); !ok {
		t.Errorf("the mount does not show the tool's rename to done/plan.md")
	}
	// The rename's two paths reach the mount as two changes of the feed,
	// each seen within a poll, not at one instant: a lookup answered from
	// the store can show the new path while the kernel still holds the old
	// name until the watcher drops it.
	if _, ok := waitFor(func() bool { _, err := os.Stat(filepath.Join(dir, "plan.md")); return os.IsNotExist(err) }, time.Now(), 5*time.Second); !ok {
		t.Errorf("plan.md is still in the mount after the rename")
	}

	res = env.tool(t, []string{`{"command":"delete","path":"/memories/notes"}`}, store, "--session", toolSess)
	wantResults(t, res, toolResult{Content: "Successfully deleted /memories/notes"})
	if _, ok := waitFor(func() bool { _, err := os.Stat(filepath.Join(dir, "notes", "m.txt")); return os.IsNotExist(err) }, time.Now(), 5*time.Second); !ok {
		t.Errorf("notes/m.txt is still in the mount after the tool deleted notes")
	}

	// History, oldest first: the tool's versions are the tool session's.
	vs := env.versionList(t, store)
	var got []string
	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i]
		who := "mount"
		if v.CreatedBy != nil && *v.CreatedBy == versions.SessionActor(toolSess) {
			who = "tool"
		} else if v.CreatedBy == nil || *v.CreatedBy != versions.SessionActor(mountSess) {
			who = "someone else"
		}
		got = append(got, who+" "+string(v.Operation)+" "+deref(v.Path))
	}
	want := []string{
		"tool created /plan.md",
		"mount modified /plan.md",
		"mount created /notes/m.txt",
		"tool modified /notes/m.txt",
		"tool modified /done/plan.md",
		"tool deleted /notes/m.txt",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	log := env.cli(t, "log", store)
	if n := strings.Count(log, "session "+shortID(toolSess)); n != 4 {
		t.Errorf("memfs log names the tool's session %d times, want 4:\n%s", n, log)
	}

	// A read_only attachment: views work, changes are refused.
	roSess := strings.TrimSpace(env.cli(t, "session", "create", "--store", store+":read_only"))
	res = env.tool(t, []string{
		`{"command":"view","path":"/memories/done/plan.md","view_range":[1,1]}`,
		`{"command":"delete","path":"/memories/done"}`,
	}, store, "--session", roSess)
	wantResults(t, res,
		toolResult{Content: "Here's the content of /memories/done/plan.md with line numbers:\n     1\t# Plan"},
		toolResult{Content: "Error: Cannot delete /memories/done: memory store " + store + " is attached read-only to session " + roSess + "; nothing was changed", IsError: true},
	)

	// Without --session the OS user writes.
	env.tool(t, []string{`{"command":"create","path":"/memories/by-user.md","file_text":"u"}`}, store)
	if v := env.versionList(t, store)[0]; v.CreatedBy == nil || v.CreatedBy.Type != "user_actor" {
		t.Errorf("memfs tool without --session wrote as %+v, want a user_actor", v.CreatedBy)
	}
	if _, errOut, code := env.run(t, "tool", store, "--session", "sesn_nope"); code != exitNotFound {
		t.Errorf("memfs tool --session sesn_nope: exit %d (%s), want %d", code, errOut, exitNotFound)
	}
}

func wantResults(t *testing.T, got []toolResult, want ...toolResult) {
	t.Helper()
	for i := range want {
		want[i].Type = "tool_result"
		if i >= len(got) || got[i] != want[i] {
			var g toolResult
			if i < len(got) {
				g = got[i]
			}
			t.Errorf("result %d:\n got %+v\nwant %+v", i, g, want[i])
		}
	}
}

// TestToolOverHTTP: memfs serve answers the memory tool's route with the
// same results as the CLI, behind the API's keys, attributes writes to the
// key or to the session a harness names, and answers a bad request in the
// API's error envelope.
func TestToolOverHTTP(t *testing.T) {
	e := newE2EEnv(t)
	// A harness acting for the sessions it runs: a key of every store
	// made to act as any session.
	key := strings.TrimSpace(e.cli(t, "apikey", "create", "--name", t.Name(), "--any-session"))
	srv := e.startServe(t)
	store, _ := e.createStore(t, "Tool over HTTP")
	sess := strings.TrimSpace(e.cli(t, "session", "create", "--store", store))
	roSess := strings.TrimSpace(e.cli(t, "session", "create", "--store", store+":read_only"))
	post := func(storeID, session, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.url+"/v1/memory_stores/"+storeID+"/memory_tool", strings.NewReader(body))
		req.Header.Set("x-api-key", key)
		if session != "" {
			req.Header.Set(memtool.SessionHeader, session)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, strings.TrimSpace(string(b))
	}
	checks := []struct {
		session, body string
		code          int
		want          string
	}{
		{"", `{"command":"create","path":"/memories/by-key.md","file_text":"<b>key</b>\n"}`, 200,
			`{"type":"tool_result","content":"File created successfully at: /memories/by-key.md","is_error":false}`},
		{sess, `{"command":"create","path":"/memories/by-session.md","file_text":"s"}`, 200,
			`{"type":"tool_result","content":"File created successfully at: /memories/by-session.md","is_error":false}`},
		{roSess, `{"command":"delete","path":"/memories/by-key.md"}`, 403,
			`{"type":"error","error":{"type":"permission_error","message":"Cannot delete /memories/by-key.md: memory store ` + store + ` is attached read-only to session ` + roSess + `; nothing was changed"}}`},
		{roSess, `{"command":"view","path":"/memories/by-key.md"}`, 200,
			`{"type":"tool_result","content":"Here's the content of /memories/by-key.md with line numbers:\n     1\t<b>key</b>\n     2\t","is_error":false}`},
		{"", `{"command":"view","path":"/memories/../x"}`, 200,
			`{"type":"tool_result","content":"Error: Path /memories/../x would escape /memories directory","is_error":true}`},
	}
	for _, c := range checks {
		if code, body := post(store, c.session, c.body); code != c.code || body != c.want {
			t.Errorf("POST %s (session %q):\n got %d %s\nwant %d %s", c.body, c.session, code, body, c.code, c.want)
		}
	}
	errorType := func(body string) string {
		var env struct {
			Type  string `json:"type"`
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		json.Unmarshal([]byte(body), &env)
		return env.Type + "/" + env.Error.Type
	}
	for _, c := range []struct {
		store, session, body string
		code                 int
		typ                  string
	}{
		{"memstore_nope", "", `{"command":"view","path":"/memories"}`, 404, "error/not_found_error"},
		{store, "sesn_nope", `{"command":"view","path":"/memories"}`, 404, "error/not_found_error"},
		{store, "", `view /memories`, 400, "error/invalid_request_error"},
	} {
		if code, body := post(c.store, c.session, c.body); code != c.code || errorType(body) != c.typ {
			t.Errorf("POST %s to %s (session %q): %d %s, want %d %s", c.body, c.store, c.session, code, body, c.code, c.typ)
		}
	}

	var keys struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	e.cliJSON(t, &keys, "apikey", "list")
	vs := e.versionList(t, store)
	if len(vs) != 2 || len(keys.Data) != 1 {
		t.Fatalf("%d versions, %d keys; want 2 and 1", len(vs), len(keys.Data))
	}
	if by := vs[1].CreatedBy; by == nil || *by != (versions.Actor{Type: "api_actor", ID: keys.Data[0].ID}) {
		t.Errorf("by-key.md written by %+v, want the API key %s", by, keys.Data[0].ID)
	}
	if by := vs[0].CreatedBy; by == nil || *by != (versions.Actor{Type: "session_actor", ID: sess, Via: keys.Data[0].ID}) {
		t.Errorf("by-session.md written by %+v, want session %s", by, sess)
	}
}
