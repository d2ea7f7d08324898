package main

// memfs serve, as a user runs it: the built binary on a real listener over
// a real database, a key made with memfs apikey, the official Go SDK as the
// client.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
)

var bg = context.Background()

// server is a running `memfs serve`.
type server struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	done   chan struct{}
}

// startServe starts `memfs serve --listen 127.0.0.1:0 ARGS` and waits for
// the address it logs. Cleanup stops it with SIGTERM.
func (e *e2eEnv) startServe(t *testing.T, args ...string) *server {
	t.Helper()
	s := &server{stderr: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(memfsBin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	s.cmd.Env = e.environ()
	pr, pw := io.Pipe()
	s.cmd.Stderr = io.MultiWriter(s.stderr, pw)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.cmd.Wait()
		pw.Close()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			t.Logf("memfs serve stderr:\n%s", s.stderr.String())
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), " url="); ok {
				found <- strings.Fields(u)[0]
				break
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case s.url = <-found:
	case <-s.done:
		t.Fatalf("memfs serve exited before it listened:\n%s", s.stderr.String())
	case <-time.After(e2eReadyTimeout):
		t.Fatalf("memfs serve did not log its address in %v:\n%s", e2eReadyTimeout, s.stderr.String())
	}
	return s
}

// stop sends SIGTERM and waits; it returns the exit state.
func (s *server) stop(t *testing.T) *os.ProcessState {
	t.Helper()
	select {
	case <-s.done:
		return s.cmd.ProcessState
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(e2eStopTimeout):
		s.cmd.Process.Kill()
		<-s.done
		t.Errorf("memfs serve did not stop within %v of SIGTERM", e2eStopTimeout)
	}
	return s.cmd.ProcessState
}

func (e *e2eEnv) apiKey(t *testing.T) string {
	t.Helper()
	key := strings.TrimSpace(e.cli(t, "apikey", "create", "--name", t.Name()))
	if !strings.HasPrefix(key, "sk-memfs-") {
		t.Fatalf("apikey create printed %q", key)
	}
	return key
}

// sameJSON fails unless the server's raw JSON and the CLI's JSON are the
// same object, and the SDK decodes both to the same value.
func sameJSON[T any, PT interface {
	*T
	UnmarshalJSON([]byte) error
}](t *testing.T, what string, fromSDK *T, raw string, cliOut string) {
	t.Helper()
	var a, b any
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		t.Fatalf("%s: the server's JSON: %v", what, err)
	}
	if err := json.Unmarshal([]byte(cliOut), &b); err != nil {
		t.Fatalf("%s: the CLI's JSON: %v", what, err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: the API answers\n%s\nthe CLI prints\n%s", what, raw, cliOut)
	}
	var viaCLI T
	if err := PT(&viaCLI).UnmarshalJSON([]byte(cliOut)); err != nil {
		t.Fatalf("%s: the SDK cannot decode the CLI's JSON: %v", what, err)
	}
	x, _ := json.Marshal(fromSDK)
	y, _ := json.Marshal(&viaCLI)
	if string(x) != string(y) {
		t.Errorf("%s: the SDK decodes the API's object as\n%s\nand the CLI's as\n%s", what, x, y)
	}
}

// withoutMemfsFields is the CLI's JSON object without the memfs fields
// it adds to the API's object (limits and counts a script monitors), after
// checking it has each of them.
func withoutMemfsFields(t *testing.T, cliOut string, fields ...string) string {
	t.Helper()
	var o map[string]any
	if err := json.Unmarshal([]byte(cliOut), &o); err != nil {
		t.Fatalf("the CLI's JSON: %v", err)
	}
	for _, f := range fields {
		if _, ok := o[f]; !ok {
			t.Errorf("the CLI's JSON lacks the memfs field %q:\n%s", f, cliOut)
		}
		delete(o, f)
	}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServeSDKMatchesCLI(t *testing.T) {
	e := newE2EEnv(t)
	key := e.apiKey(t)
	srv := e.startServe(t)
	c := anthropic.NewClient(option.WithBaseURL(srv.url), option.WithAPIKey(key))
	ms := c.Beta.MemoryStores

	st, err := ms.New(bg, anthropic.BetaMemoryStoreNewParams{Name: "Shared Notes", Description: param.NewOpt("for both"), Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "store", st, st.RawJSON(), withoutMemfsFields(t, e.cli(t, "--format", "json", "store", "get", st.ID),
		"max_memories", "max_memory_bytes", "max_directories", "max_history_bytes", "memory_count", "history_bytes", "guard"))

	m, err := ms.Memories.New(bg, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/a/b.md", Content: param.NewOpt("hello <world> & \"you\"\n")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Memories.Update(bg, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: st.ID, Content: param.NewOpt("v2 ☃\n")}); err != nil {
		t.Fatal(err)
	}
	e.cli(t, "memory", "create", st.ID, "--path", "/a/deep/c.md", "--content", "from the CLI")
	got, err := ms.Memories.Get(bg, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: st.ID})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "memory", got, got.RawJSON(), e.cli(t, "--format", "json", "memory", "get", st.ID, m.ID))

	list, err := ms.Memories.List(bg, st.ID, anthropic.BetaMemoryStoreMemoryListParams{PathPrefix: param.NewOpt("/a/"), Depth: param.NewOpt[int64](1), Limit: param.NewOpt[int64](100)})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "memory list", list, list.RawJSON(), e.cli(t, "--format", "json", "memory", "list", st.ID, "--path-prefix", "/a/", "--depth", "1", "--limit", "100"))

	vers, err := ms.MemoryVersions.List(bg, st.ID, anthropic.BetaMemoryStoreMemoryVersionListParams{Limit: param.NewOpt[int64](100)})
	if err != nil {
		t.Fatal(err)
	}
	if len(vers.Data) != 3 {
		t.Fatalf("%d versions, want 3", len(vers.Data))
	}
	sameJSON(t, "version list", vers, vers.RawJSON(), e.cli(t, "--format", "json", "version", "list", st.ID, "--limit", "100"))
	if vers.Data[0].CreatedBy.Type != "user_actor" || vers.Data[1].CreatedBy.AsAPIActor().APIKeyID == "" {
		t.Errorf("actors: CLI %s, API %s", vers.Data[0].CreatedBy.RawJSON(), vers.Data[1].CreatedBy.RawJSON())
	}
	old := vers.Data[2]
	if _, err := ms.MemoryVersions.Redact(bg, old.ID, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: st.ID}); err != nil {
		t.Fatal(err)
	}
	v, err := ms.MemoryVersions.Get(bg, old.ID, anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: st.ID})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "redacted version", v, v.RawJSON(), e.cli(t, "--format", "json", "version", "get", st.ID, old.ID))

	sess, err := c.Beta.Sessions.New(bg, anthropic.BetaSessionNewParams{
		Agent:         anthropic.BetaSessionNewParamsAgentUnion{OfBetaManagedAgentsAgents: &anthropic.BetaManagedAgentsAgentParams{ID: "agent_1", Version: param.NewOpt[int64](3)}},
		EnvironmentID: "env_1",
		Resources: []anthropic.BetaSessionNewParamsResourceUnion{{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{
			MemoryStoreID: st.ID, Access: anthropic.BetaManagedAgentsMemoryStoreResourceParamAccessReadOnly, Instructions: param.NewOpt("look, don't touch")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Agent.ID != "agent_1" || sess.Agent.Version != 3 {
		t.Errorf("the agent was not recorded as given: %s", sess.JSON.Agent.Raw())
	}
	sameJSON(t, "session", sess, sess.RawJSON(), e.cli(t, "--format", "json", "session", "get", sess.ID))
	// The CLI sees the API's session, and the API the CLI's.
	cliSess := strings.TrimSpace(e.cli(t, "session", "create", "--store", st.ID))
	got2, err := c.Beta.Sessions.Get(bg, cliSess, anthropic.BetaSessionGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "CLI-made session", got2, got2.RawJSON(), e.cli(t, "--format", "json", "session", "get", cliSess))
}

// The memory tool is a route of the same server, behind the same keys.
func TestServeMemoryTool(t *testing.T) {
	e := newE2EEnv(t)
	key := e.apiKey(t)
	srv := e.startServe(t)
	store, _ := e.createStore(t, "Tool")
	post := func(k, body string) (int, string) {
		req, _ := http.NewRequest("POST", srv.url+"/v1/memory_stores/"+store+"/memory_tool", strings.NewReader(body))
		req.Header.Set("x-api-key", k)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := post(key, `{"command":"create","path":"/memories/a.md","file_text":"hi"}`); code != 200 || !strings.Contains(body, "tool_result") {
		t.Fatalf("memory_tool create: %d %s", code, body)
	}
	if code, _ := post("sk-memfs-wrong", `{"command":"view","path":"/memories"}`); code != 401 {
		t.Errorf("memory_tool without a valid key: %d", code)
	}
	vs := e.versionList(t, store)
	if len(vs) != 1 || vs[0].CreatedBy == nil || vs[0].CreatedBy.Type != "api_actor" {
		t.Errorf("the tool's write is attributed %+v", vs)
	}
}

func TestServeKeysAndShutdown(t *testing.T) {
	e := newE2EEnv(t)
	key := e.apiKey(t)
	srv := e.startServe(t)
	c := anthropic.NewClient(option.WithBaseURL(srv.url), option.WithAPIKey(key))
	st, err := c.Beta.MemoryStores.New(bg, anthropic.BetaMemoryStoreNewParams{Name: "Keys"})
	if err != nil {
		t.Fatal(err)
	}
	var keys struct {
		Data []struct {
			ID        string  `json:"id"`
			RevokedAt *string `json:"revoked_at"`
		} `json:"data"`
	}
	e.cliJSON(t, &keys, "apikey", "list")
	if len(keys.Data) != 1 || keys.Data[0].RevokedAt != nil {
		t.Fatalf("apikey list = %+v", keys)
	}
	if out := e.cli(t, "apikey", "list"); strings.Contains(out, key) || strings.Contains(e.cli(t, "--format", "json", "apikey", "list"), key[len("sk-memfs-"):]) {
		t.Fatal("apikey list shows the key itself")
	}

	// Requests in flight when SIGTERM arrives finish; then it exits 0.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var written []string
	var failed int
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := c.Beta.MemoryStores.Memories.New(bg, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{
				Path: "/m" + string(rune('a'+i)) + ".md", Content: param.NewOpt(strings.Repeat("x", 50000))})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				return
			}
			written = append(written, m.ID)
		}()
	}
	time.Sleep(5 * time.Millisecond)
	e.cli(t, "apikey", "revoke", keys.Data[0].ID)
	state := srv.stop(t)
	wg.Wait()
	if state == nil || !state.Success() {
		t.Fatalf("memfs serve exited %v after SIGTERM:\n%s", state, srv.stderr.String())
	}
	for _, id := range written {
		var m struct {
			Content *string `json:"content"`
		}
		e.cliJSON(t, &m, "memory", "get", st.ID, id)
		if m.Content == nil || len(*m.Content) != 50000 {
			t.Errorf("memory %s acknowledged but not whole", id)
		}
	}
	t.Logf("%d writes acknowledged, %d refused or cut off by revocation and shutdown", len(written), failed)

	// The revoked key is refused by the next server.
	srv2 := e.startServe(t)
	c2 := anthropic.NewClient(option.WithBaseURL(srv2.url), option.WithAPIKey(key))
	_, err = c2.Beta.MemoryStores.New(bg, anthropic.BetaMemoryStoreNewParams{Name: "after"})
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != 401 {
		t.Fatalf("a revoked key got %v, want 401", err)
	}
}

func TestServeWarnsWithoutTLS(t *testing.T) {
	e := newE2EEnv(t)
	e.cli(t, "apikey", "create", "--name", "tls")
	srv := e.startServe(t, "--listen", "0.0.0.0:0")
	if !strings.Contains(srv.stderr.String(), "without TLS") {
		t.Errorf("no warning for a non-loopback address without TLS:\n%s", srv.stderr.String())
	}
	srv.stop(t)
	lo := e.startServe(t)
	if strings.Contains(lo.stderr.String(), "without TLS") {
		t.Errorf("a loopback address was warned about:\n%s", lo.stderr.String())
	}
}

// A session made through the API is what memfs mount mounts: a save through
// the mount shows in the API with the session as its actor, and a write
// through the API shows in the mount within the visibility bound.
func TestServeAndMountAgree(t *testing.T) {
	e := newE2EEnv(t)
	key := e.apiKey(t)
	srv := e.startServe(t)
	c := anthropic.NewClient(option.WithBaseURL(srv.url), option.WithAPIKey(key))
	ms := c.Beta.MemoryStores
	st, err := ms.New(bg, anthropic.BetaMemoryStoreNewParams{Name: "Team Memory"})
	if err != nil {
		t.Fatal(err)
	}
	shared, err := ms.Memories.New(bg, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/shared.md", Content: param.NewOpt("v1\n")})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := c.Beta.Sessions.New(bg, anthropic.BetaSessionNewParams{EnvironmentID: "env_local",
		Resources: []anthropic.BetaSessionNewParamsResourceUnion{{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{MemoryStoreID: st.ID}}}})
	if err != nil {
		t.Fatal(err)
	}
	mount := sess.Resources[0].MountPath
	mnt := mountDir(t)
	e.startMount(t, mnt, "--session", sess.ID)
	dir := filepath.Join(mnt, filepath.Base(mount))
	if b, err := os.ReadFile(filepath.Join(dir, "shared.md")); err != nil || string(b) != "v1\n" {
		t.Fatalf("the mount shows %q, %v", b, err)
	}

	sh(t, dir, "printf 'written by the agent\\n' > agent.md")
	e.settle(t) // a new file is published a grace period after its close()
	vs, err := ms.MemoryVersions.List(bg, st.ID, anthropic.BetaMemoryStoreMemoryVersionListParams{SessionID: param.NewOpt(sess.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs.Data) != 1 || vs.Data[0].Path != "/agent.md" || vs.Data[0].CreatedBy.AsSessionActor().SessionID != sess.ID {
		t.Fatalf("the mount's save through the API: %s", vs.RawJSON())
	}
	m, err := ms.Memories.Get(bg, vs.Data[0].MemoryID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: st.ID})
	if err != nil || m.Content != "written by the agent\n" {
		t.Fatalf("the saved memory through the API: %+v, %v", m, err)
	}

	start := time.Now()
	if _, err := ms.Memories.Update(bg, shared.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: st.ID, Content: param.NewOpt("v2 from the API\n")}); err != nil {
		t.Fatal(err)
	}
	took, ok := waitContent(filepath.Join(dir, "shared.md"), "v2 from the API\n", start, time.Second)
	if !ok {
		t.Fatalf("the API's write did not show in the mount within 1s")
	}
	t.Logf("an API write showed in the mount after %v", took)
}
