package httpapi_test

// The official Go SDK, unmodified, drives every memory-store, memory,
// version and session call it offers for memory stores.

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/versions"
)

func TestSDKStores(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	ms := e.client.Beta.MemoryStores

	st, err := ms.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "User Preferences",
		Description: param.NewOpt("what the user likes"), Metadata: map[string]string{"owner": "ana"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "User Preferences" || st.Description != "what the user likes" || st.Metadata["owner"] != "ana" || !st.ArchivedAt.IsZero() {
		t.Errorf("created store = %+v", st)
	}
	got, err := ms.Get(ctx, st.ID, anthropic.BetaMemoryStoreGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != st.ID || !got.CreatedAt.Equal(st.CreatedAt) {
		t.Errorf("retrieved %+v, want %+v", got, st)
	}
	up, err := ms.Update(ctx, st.ID, anthropic.BetaMemoryStoreUpdateParams{Name: param.NewOpt("Prefs"), Metadata: map[string]string{"team": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if up.Name != "Prefs" || up.Metadata["owner"] != "ana" || up.Metadata["team"] != "x" || !up.UpdatedAt.After(st.UpdatedAt) {
		t.Errorf("updated store = %+v", up)
	}

	t.Run("AutoPaging", func(t *testing.T) {
		want := map[string]bool{st.ID: true}
		for i := range 6 {
			s, err := ms.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: fmt.Sprintf("store %d", i)})
			if err != nil {
				t.Fatal(err)
			}
			want[s.ID] = true
		}
		pager := ms.ListAutoPaging(ctx, anthropic.BetaMemoryStoreListParams{Limit: param.NewOpt[int64](2)})
		seen := map[string]bool{}
		for pager.Next() {
			s := pager.Current()
			if seen[s.ID] {
				t.Errorf("store %s listed twice", s.ID)
			}
			seen[s.ID] = true
		}
		if err := pager.Err(); err != nil {
			t.Fatal(err)
		}
		if len(seen) != len(want) {
			t.Errorf("listed %d stores, want %d", len(seen), len(want))
		}
		page, err := ms.List(ctx, anthropic.BetaMemoryStoreListParams{CreatedAtGte: param.NewOpt(time.Now().Add(time.Hour))})
		if err != nil || len(page.Data) != 0 || page.NextPage != "" {
			t.Errorf("stores created in an hour: %v, %v", page, err)
		}
	})

	t.Run("Archive", func(t *testing.T) {
		a, err := ms.Archive(ctx, st.ID, anthropic.BetaMemoryStoreArchiveParams{})
		if err != nil {
			t.Fatal(err)
		}
		if a.ArchivedAt.IsZero() {
			t.Fatal("archive left archived_at null")
		}
		_, err = ms.Memories.New(ctx, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/a.md", Content: param.NewOpt("x")})
		wantAPIError(t, err, http.StatusConflict, httpapi.TypeConflict)
		_, err = ms.Update(ctx, st.ID, anthropic.BetaMemoryStoreUpdateParams{Name: param.NewOpt("again")})
		wantAPIError(t, err, http.StatusConflict, httpapi.TypeConflict)
		listed := func(include bool) bool {
			pager := ms.ListAutoPaging(ctx, anthropic.BetaMemoryStoreListParams{IncludeArchived: param.NewOpt(include)})
			for pager.Next() {
				if pager.Current().ID == st.ID {
					return true
				}
			}
			if err := pager.Err(); err != nil {
				t.Fatal(err)
			}
			return false
		}
		if listed(false) || !listed(true) {
			t.Errorf("an archived store is listed by default or hidden with include_archived")
		}
		_, err = e.client.Beta.Sessions.New(ctx, anthropic.BetaSessionNewParams{EnvironmentID: "env_1",
			Resources: []anthropic.BetaSessionNewParamsResourceUnion{{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{MemoryStoreID: st.ID}}}})
		wantAPIError(t, err, http.StatusConflict, httpapi.TypeConflict)
	})

	t.Run("Delete", func(t *testing.T) {
		d, err := ms.Delete(ctx, st.ID, anthropic.BetaMemoryStoreDeleteParams{})
		if err != nil {
			t.Fatal(err)
		}
		if d.ID != st.ID || string(d.Type) != "memory_store_deleted" {
			t.Errorf("delete answered %+v", d)
		}
		_, err = ms.Get(ctx, st.ID, anthropic.BetaMemoryStoreGetParams{})
		wantAPIError(t, err, http.StatusNotFound, httpapi.TypeNotFound)
	})
}

func TestSDKMemories(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	ms := e.client.Beta.MemoryStores
	st, err := ms.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "Notes"})
	if err != nil {
		t.Fatal(err)
	}
	mem := ms.Memories
	create := func(path, content string) *anthropic.BetaManagedAgentsMemory {
		t.Helper()
		m, err := mem.New(ctx, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: path, Content: param.NewOpt(content)})
		if err != nil {
			t.Fatalf("create %s: %v", path, err)
		}
		return m
	}
	todo := create("/notes/todo.md", "buy milk\n")
	if !contains(todo.RawJSON(), `"content":null`) {
		t.Errorf("create answered content %q in the basic view", todo.Content)
	}
	if todo.ContentSha256 != sha256Hex("buy milk\n") || todo.ContentSizeBytes != 9 || todo.MemoryVersionID == "" {
		t.Errorf("created memory = %+v", todo)
	}
	for _, p := range []string{"/notes/done.md", "/projects/a/plan.md", "/projects/a/deep/x.md", "/projects/b.md", "/readme.md"} {
		create(p, "text of "+p)
	}

	t.Run("Get", func(t *testing.T) {
		m, err := mem.Get(ctx, todo.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: st.ID})
		if err != nil {
			t.Fatal(err)
		}
		if m.Content != "buy milk\n" || m.Path != "/notes/todo.md" {
			t.Errorf("retrieved %+v", m)
		}
		b, err := mem.Get(ctx, todo.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: st.ID, View: anthropic.BetaManagedAgentsMemoryViewBasic})
		if err != nil || b.Content != "" {
			t.Errorf("basic view: %+v, %v", b, err)
		}
		_, err = mem.Get(ctx, "mem_nothere", anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: st.ID})
		wantAPIError(t, err, http.StatusNotFound, httpapi.TypeNotFound)
	})

	t.Run("PathConflict", func(t *testing.T) {
		_, err := mem.New(ctx, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/notes/todo.md", Content: param.NewOpt("again")})
		ae := wantAPIError(t, err, http.StatusConflict, httpapi.TypePathConflict)
		if raw := ae.RawJSON(); !contains(raw, todo.ID) {
			t.Errorf("path conflict does not name the memory in the way: %s", raw)
		}
		_, err = mem.New(ctx, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/notes/todo.md/under", Content: param.NewOpt("x")})
		wantAPIError(t, err, http.StatusConflict, httpapi.TypePathConflict)
		_, err = mem.New(ctx, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/a/../b", Content: param.NewOpt("x")})
		wantAPIError(t, err, http.StatusBadRequest, httpapi.TypeInvalidRequest)
	})

	t.Run("Update", func(t *testing.T) {
		stale := todo.ContentSha256
		m, err := mem.Update(ctx, todo.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: st.ID,
			Content: param.NewOpt("buy oat milk\n"), Precondition: anthropic.BetaManagedAgentsPreconditionParam{ContentSha256: param.NewOpt(stale)}})
		if err != nil {
			t.Fatal(err)
		}
		if m.ID != todo.ID || m.ContentSha256 != sha256Hex("buy oat milk\n") || m.MemoryVersionID == todo.MemoryVersionID {
			t.Errorf("updated %+v", m)
		}
		// The same precondition again is stale now: nothing changes.
		_, err = mem.Update(ctx, todo.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: st.ID,
			Content: param.NewOpt("something else"), Precondition: anthropic.BetaManagedAgentsPreconditionParam{ContentSha256: param.NewOpt(stale)}})
		wantAPIError(t, err, http.StatusConflict, httpapi.TypePreconditionFailed)
		now, err := mem.Get(ctx, todo.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: st.ID})
		if err != nil || now.Content != "buy oat milk\n" {
			t.Errorf("a failed precondition changed the memory: %+v, %v", now, err)
		}
		// A rename keeps the id; with view=full the answer has the content.
		r, err := mem.Update(ctx, todo.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: st.ID,
			Path: param.NewOpt("/notes/shopping.md"), View: anthropic.BetaManagedAgentsMemoryViewFull})
		if err != nil {
			t.Fatal(err)
		}
		if r.ID != todo.ID || r.Path != "/notes/shopping.md" || r.Content != "buy oat milk\n" {
			t.Errorf("renamed %+v", r)
		}
		_, err = mem.Update(ctx, todo.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: st.ID, Path: param.NewOpt("/readme.md")})
		wantAPIError(t, err, http.StatusConflict, httpapi.TypePathConflict)
	})

	t.Run("List", func(t *testing.T) {
		all := map[string]bool{}
		pager := mem.ListAutoPaging(ctx, st.ID, anthropic.BetaMemoryStoreMemoryListParams{Limit: param.NewOpt[int64](2)})
		for pager.Next() {
			it := pager.Current()
			if it.Type != "memory" {
				t.Errorf("depth 0 listed a %s", it.Type)
			}
			all[it.Path] = true
		}
		if err := pager.Err(); err != nil {
			t.Fatal(err)
		}
		if len(all) != 6 {
			t.Errorf("auto-paging listed %d memories, want 6: %v", len(all), all)
		}
		page, err := mem.List(ctx, st.ID, anthropic.BetaMemoryStoreMemoryListParams{PathPrefix: param.NewOpt("/projects/"), Depth: param.NewOpt[int64](1)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range page.Data {
			got = append(got, it.Type+" "+it.Path)
			if it.Type == "memory_prefix" && it.AsMemoryPrefix().Path != it.Path {
				t.Errorf("prefix item decodes as %+v", it.AsMemoryPrefix())
			}
		}
		if want := "[memory_prefix /projects/a/ memory /projects/b.md]"; fmt.Sprint(got) != want {
			t.Errorf("depth 1 under /projects/ = %v, want %s", got, want)
		}
		full, err := mem.List(ctx, st.ID, anthropic.BetaMemoryStoreMemoryListParams{PathPrefix: param.NewOpt("/notes/"), View: anthropic.BetaManagedAgentsMemoryViewFull})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range full.Data {
			if it.AsMemory().Content != "text of "+it.Path && it.Path != "/notes/shopping.md" {
				t.Errorf("full view of %s has content %q", it.Path, it.Content)
			}
		}
		_, err = mem.List(ctx, st.ID, anthropic.BetaMemoryStoreMemoryListParams{Depth: param.NewOpt[int64](2)})
		wantAPIError(t, err, http.StatusBadRequest, httpapi.TypeInvalidRequest)
		_, err = mem.List(ctx, st.ID, anthropic.BetaMemoryStoreMemoryListParams{PathPrefix: param.NewOpt("/notes")})
		wantAPIError(t, err, http.StatusBadRequest, httpapi.TypeInvalidRequest)
	})

	t.Run("Delete", func(t *testing.T) {
		readme, err := mem.Get(ctx, "", anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: st.ID})
		if err == nil {
			t.Fatalf("a memory without an id was retrieved: %+v", readme)
		}
		page, err := mem.List(ctx, st.ID, anthropic.BetaMemoryStoreMemoryListParams{PathPrefix: param.NewOpt("/notes/")})
		if err != nil || len(page.Data) == 0 {
			t.Fatal(page, err)
		}
		victim := page.Data[0].AsMemory()
		_, err = mem.Delete(ctx, victim.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: st.ID, ExpectedContentSha256: param.NewOpt(sha256Hex("not it"))})
		wantAPIError(t, err, http.StatusConflict, httpapi.TypePreconditionFailed)
		d, err := mem.Delete(ctx, victim.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: st.ID, ExpectedContentSha256: param.NewOpt(victim.ContentSha256)})
		if err != nil {
			t.Fatal(err)
		}
		if d.ID != victim.ID || string(d.Type) != "memory_deleted" {
			t.Errorf("delete answered %+v", d)
		}
		_, err = mem.Get(ctx, victim.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: st.ID})
		wantAPIError(t, err, http.StatusNotFound, httpapi.TypeNotFound)
	})
}

func TestSDKVersions(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	ms := e.client.Beta.MemoryStores
	st, err := ms.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "History"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ms.Memories.New(ctx, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/a.md", Content: param.NewOpt("one")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"two", "three"} {
		if _, err := ms.Memories.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: st.ID, Content: param.NewOpt(c)}); err != nil {
			t.Fatal(err)
		}
	}
	other, err := ms.Memories.New(ctx, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/b.md", Content: param.NewOpt("b")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Memories.Delete(ctx, other.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: st.ID}); err != nil {
		t.Fatal(err)
	}
	mv := ms.MemoryVersions

	var ops []string
	pager := mv.ListAutoPaging(ctx, st.ID, anthropic.BetaMemoryStoreMemoryVersionListParams{MemoryID: param.NewOpt(m.ID), Limit: param.NewOpt[int64](1)})
	var vs []anthropic.BetaManagedAgentsMemoryVersion
	for pager.Next() {
		v := pager.Current()
		vs = append(vs, v)
		ops = append(ops, string(v.Operation))
		actor := v.CreatedBy.AsAPIActor()
		if v.CreatedBy.Type != "api_actor" || actor.APIKeyID != e.keyID {
			t.Errorf("version %s created by %+v, want api_actor %s", v.ID, v.CreatedBy, e.keyID)
		}
		if v.Content != "" {
			t.Errorf("a listed version carries content in the basic view")
		}
	}
	if err := pager.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ops) != "[modified modified created]" {
		t.Fatalf("versions of %s newest first = %v", m.ID, ops)
	}

	t.Run("Filters", func(t *testing.T) {
		count := func(p anthropic.BetaMemoryStoreMemoryVersionListParams) int {
			t.Helper()
			n := 0
			pager := mv.ListAutoPaging(ctx, st.ID, p)
			for pager.Next() {
				n++
			}
			if err := pager.Err(); err != nil {
				t.Fatal(err)
			}
			return n
		}
		for name, c := range map[string]struct {
			p    anthropic.BetaMemoryStoreMemoryVersionListParams
			want int
		}{
			"all":            {anthropic.BetaMemoryStoreMemoryVersionListParams{}, 5},
			"deleted memory": {anthropic.BetaMemoryStoreMemoryVersionListParams{MemoryID: param.NewOpt(other.ID)}, 2},
			"operation":      {anthropic.BetaMemoryStoreMemoryVersionListParams{Operation: anthropic.BetaManagedAgentsMemoryVersionOperationDeleted}, 1},
			"api key":        {anthropic.BetaMemoryStoreMemoryVersionListParams{APIKeyID: param.NewOpt(e.keyID)}, 5},
			"other key":      {anthropic.BetaMemoryStoreMemoryVersionListParams{APIKeyID: param.NewOpt("apikey_other")}, 0},
			"session":        {anthropic.BetaMemoryStoreMemoryVersionListParams{SessionID: param.NewOpt("sesn_none")}, 0},
			"future":         {anthropic.BetaMemoryStoreMemoryVersionListParams{CreatedAtGte: param.NewOpt(time.Now().Add(time.Hour))}, 0},
			"full view":      {anthropic.BetaMemoryStoreMemoryVersionListParams{View: anthropic.BetaManagedAgentsMemoryViewFull}, 5},
		} {
			if got := count(c.p); got != c.want {
				t.Errorf("%s: %d versions, want %d", name, got, c.want)
			}
		}
	})

	t.Run("Get", func(t *testing.T) {
		v, err := mv.Get(ctx, vs[2].ID, anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: st.ID})
		if err != nil {
			t.Fatal(err)
		}
		if v.Content != "one" || v.Operation != "created" || v.Path != "/a.md" || v.ContentSha256 != sha256Hex("one") {
			t.Errorf("retrieved %+v", v)
		}
		b, err := mv.Get(ctx, vs[2].ID, anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: st.ID, View: anthropic.BetaManagedAgentsMemoryViewBasic})
		if err != nil || b.Content != "" {
			t.Errorf("basic view of a version: %+v, %v", b, err)
		}
	})

	t.Run("Redact", func(t *testing.T) {
		_, err := mv.Redact(ctx, vs[0].ID, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: st.ID})
		wantAPIError(t, err, http.StatusConflict, httpapi.TypeConflict)
		r, err := mv.Redact(ctx, vs[1].ID, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: st.ID})
		if err != nil {
			t.Fatal(err)
		}
		if r.RedactedAt.IsZero() || r.RedactedBy.AsAPIActor().APIKeyID != e.keyID || r.Content != "" || r.ContentSha256 != "" || r.Path != "" {
			t.Errorf("redacted %+v", r)
		}
		if r.Operation != "modified" || r.CreatedBy.Type != "api_actor" {
			t.Errorf("redaction lost who or what: %+v", r)
		}
		again, err := mv.Get(ctx, vs[1].ID, anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: st.ID})
		if err != nil || again.Content != "" || again.RedactedAt.IsZero() {
			t.Errorf("redacted version reads back %+v, %v", again, err)
		}
	})
}

func TestSDKSessions(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	ms := e.client.Beta.MemoryStores
	a, err := ms.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "User Preferences", Description: param.NewOpt("likes")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ms.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "Reference"})
	if err != nil {
		t.Fatal(err)
	}
	ss := e.client.Beta.Sessions
	sess, err := ss.New(ctx, anthropic.BetaSessionNewParams{
		Agent:         anthropic.BetaSessionNewParamsAgentUnion{OfString: param.NewOpt("agent_123")},
		EnvironmentID: "env_456",
		Title:         param.NewOpt("nightly"),
		Resources: []anthropic.BetaSessionNewParamsResourceUnion{
			{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{MemoryStoreID: a.ID, Instructions: param.NewOpt("read first")}},
			{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{MemoryStoreID: b.ID, Access: anthropic.BetaManagedAgentsMemoryStoreResourceParamAccessReadOnly}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Agent.ID != "agent_123" || sess.EnvironmentID != "env_456" || sess.Title != "nightly" || sess.Status != "idle" || len(sess.Resources) != 2 {
		t.Errorf("created session = %s", sess.RawJSON())
	}
	r0 := sess.Resources[0].AsMemoryStore()
	if r0.MountPath != "/mnt/memory/user-preferences" || r0.Instructions != "read first" || r0.Access != "read_write" || r0.Description != "likes" {
		t.Errorf("first resource = %+v", r0)
	}

	t.Run("OtherResourceTypes", func(t *testing.T) {
		_, err := ss.New(ctx, anthropic.BetaSessionNewParams{EnvironmentID: "env",
			Resources: []anthropic.BetaSessionNewParamsResourceUnion{{OfFile: &anthropic.BetaManagedAgentsFileResourceParams{FileID: "file_1"}}}})
		wantAPIError(t, err, http.StatusBadRequest, httpapi.TypeInvalidRequest)
		_, err = ss.New(ctx, anthropic.BetaSessionNewParams{EnvironmentID: "env",
			Resources: []anthropic.BetaSessionNewParamsResourceUnion{{OfGitHubRepository: &anthropic.BetaManagedAgentsGitHubRepositoryResourceParams{URL: "https://github.com/x/y", AuthorizationToken: "t"}}}})
		wantAPIError(t, err, http.StatusBadRequest, httpapi.TypeInvalidRequest)
	})

	t.Run("Get", func(t *testing.T) {
		got, err := ss.Get(ctx, sess.ID, anthropic.BetaSessionGetParams{})
		if err != nil {
			t.Fatal(err)
		}
		if got.RawJSON() != sess.RawJSON() {
			t.Errorf("retrieved\n%s\nwant\n%s", got.RawJSON(), sess.RawJSON())
		}
	})

	t.Run("Resources", func(t *testing.T) {
		page, err := ss.Resources.List(ctx, sess.ID, anthropic.BetaSessionResourceListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != 2 || page.Data[1].AsMemoryStore().Access != "read_only" || page.Data[1].MountPath != "/mnt/memory/reference" {
			t.Errorf("resources = %s", page.RawJSON())
		}
		r, err := ss.Resources.Get(ctx, b.ID, anthropic.BetaSessionResourceGetParams{SessionID: sess.ID})
		if err != nil {
			t.Fatal(err)
		}
		if r.Type != "memory_store" || r.AsMemoryStore().MemoryStoreID != b.ID || r.MountPath != "/mnt/memory/reference" {
			t.Errorf("resource = %s", r.RawJSON())
		}
		_, err = ss.Resources.Get(ctx, "memstore_notattached", anthropic.BetaSessionResourceGetParams{SessionID: sess.ID})
		wantAPIError(t, err, http.StatusNotFound, httpapi.TypeNotFound)
	})

	t.Run("ListArchiveDelete", func(t *testing.T) {
		second, err := ss.New(ctx, anthropic.BetaSessionNewParams{EnvironmentID: "env_456",
			Resources: []anthropic.BetaSessionNewParamsResourceUnion{{OfMemoryStore: &anthropic.BetaManagedAgentsMemoryStoreResourceParam{MemoryStoreID: b.ID}}}})
		if err != nil {
			t.Fatal(err)
		}
		ids := func(p anthropic.BetaSessionListParams) []string {
			t.Helper()
			var out []string
			pager := ss.ListAutoPaging(ctx, p)
			for pager.Next() {
				out = append(out, pager.Current().ID)
			}
			if err := pager.Err(); err != nil {
				t.Fatal(err)
			}
			return out
		}
		if got, want := fmt.Sprint(ids(anthropic.BetaSessionListParams{Limit: param.NewOpt[int64](1)})), fmt.Sprint([]string{second.ID, sess.ID}); got != want {
			t.Errorf("sessions newest first = %s, want %s", got, want)
		}
		if got := ids(anthropic.BetaSessionListParams{MemoryStoreID: param.NewOpt(a.ID)}); len(got) != 1 || got[0] != sess.ID {
			t.Errorf("sessions attaching %s = %v", a.ID, got)
		}
		arch, err := ss.Archive(ctx, sess.ID, anthropic.BetaSessionArchiveParams{})
		if err != nil {
			t.Fatal(err)
		}
		if arch.ArchivedAt.IsZero() {
			t.Error("archive left archived_at null")
		}
		if got := ids(anthropic.BetaSessionListParams{}); len(got) != 1 || got[0] != second.ID {
			t.Errorf("after archiving, sessions = %v", got)
		}
		if got := ids(anthropic.BetaSessionListParams{IncludeArchived: param.NewOpt(true), Order: anthropic.BetaSessionListParamsOrderAsc}); len(got) != 2 || got[0] != sess.ID {
			t.Errorf("with archived, oldest first = %v", got)
		}
		if s, err := e.db.GetSession(ctx, sess.ID); err != nil || versions.ErrorCode(s.CheckOpen()) != versions.CodeConflict {
			t.Errorf("an archived session is still open to mount: %v", err)
		}
		d, err := ss.Delete(ctx, second.ID, anthropic.BetaSessionDeleteParams{})
		if err != nil {
			t.Fatal(err)
		}
		if d.ID != second.ID || string(d.Type) != "session_deleted" {
			t.Errorf("delete answered %+v", d)
		}
		_, err = ss.Get(ctx, second.ID, anthropic.BetaSessionGetParams{})
		wantAPIError(t, err, http.StatusNotFound, httpapi.TypeNotFound)
	})

	t.Run("Update", func(t *testing.T) {
		u, err := ss.Update(ctx, sess.ID, anthropic.BetaSessionUpdateParams{Title: param.NewOpt("renamed"), Metadata: map[string]string{"k": "v"}})
		if err != nil {
			t.Fatal(err)
		}
		if u.Title != "renamed" || u.Metadata["k"] != "v" {
			t.Errorf("updated session = %s", u.RawJSON())
		}
	})
}

func TestSDKAuth(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	for name, opt := range map[string]anthropic.Client{
		"wrong key": anthropic.NewClient(optBase(e), optKey("sk-memfs-nottherightkeyatallnottherightkeyatall00")),
		"not ours":  anthropic.NewClient(optBase(e), optKey("sk-ant-api03-abc")),
	} {
		_, err := opt.Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "x"})
		wantAPIError(t, err, http.StatusUnauthorized, httpapi.TypeAuthentication)
		_ = name
	}
	bearer := anthropic.NewClient(optBase(e), optToken(e.key))
	if _, err := bearer.Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "by bearer"}); err != nil {
		t.Fatalf("Authorization: Bearer: %v", err)
	}
	if _, err := e.db.RevokeAPIKey(ctx, e.keyID); err != nil {
		t.Fatal(err)
	}
	_, err := e.client.Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "after revoke"})
	wantAPIError(t, err, http.StatusUnauthorized, httpapi.TypeAuthentication)
	page, err := e.db.ListStores(ctx, versions.StoreListOptions{IncludeArchived: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].Name != "by bearer" {
		t.Errorf("refused requests changed something: %v", page.Data)
	}
}
