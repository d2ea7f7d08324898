package httpapi_test

import (
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

// A request acting as a session — with a key made for it, or with a key
// of every store made for any session and the X-Memfs-Session header —
// writes only where the session's attachment lets it, as through its
// mount: inside its write prefix, never in a store it attaches read_only
// or does not attach. Reads are not held; a key with no session is not.
func TestSessionWritesHeldToItsAttachment(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	by := versions.Actor{Type: "user_actor", ID: "t"}
	newStore := func(name string) *versions.Store {
		st, err := e.db.CreateStore(ctx, versions.StoreParams{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	newMemory := func(st *versions.Store, path, content string) *versions.Memory {
		m, err := e.db.CreateMemory(ctx, st.ID, path, content, by)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	notes, ref, other := newStore("Notes"), newStore("Reference"), newStore("Other")
	shared := newMemory(notes, "/shared.md", "everyone's v1")
	// A version of /shared.md that is not its head, which a redaction
	// may take.
	oldShared := shared.VersionID
	if _, err := e.client.Beta.MemoryStores.Memories.Update(ctx, shared.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: notes.ID, Content: param.NewOpt("everyone's")}); err != nil {
		t.Fatal(err)
	}
	refMem := newMemory(ref, "/ref.md", "read me")
	newMemory(other, "/o.md", "not the session's")
	sess, err := e.db.CreateSession(ctx, []versions.AttachmentParams{
		{StoreID: notes.ID, WritePrefix: "/projects/p1/"},
		{StoreID: ref.ID, Access: versions.ReadOnly},
	})
	if err != nil {
		t.Fatal(err)
	}
	anySession := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(keyOf(t, e, versions.APIKeyScope{AnySession: true})),
		option.WithHeader(memtool.SessionHeader, sess.ID), option.WithMaxRetries(0))
	forSession := keyOf(t, e, versions.APIKeyScope{SessionID: sess.ID})

	for _, c := range []struct {
		name, key string
		client    anthropic.Client
		instead   string
	}{
		{"KeyForSession", forSession, scopedClientOf(e, forSession), "use a key not made for the session"},
		{"AnySessionHeader", "", anySession, "leave out the X-Memfs-Session header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := c.client.Beta.MemoryStores
			mine, err := ms.Memories.New(ctx, notes.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/projects/p1/" + c.name + ".md", Content: param.NewOpt("mine")})
			if err != nil {
				t.Fatalf("create inside the write prefix: %v", err)
			}
			if _, err := ms.Memories.Update(ctx, mine.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: notes.ID, Content: param.NewOpt("ours"), Path: param.NewOpt("/projects/p1/sub/" + c.name + ".md")}); err != nil {
				t.Fatalf("update and move inside the write prefix: %v", err)
			}

			// Reads outside the prefix and in the read_only store.
			if got, err := ms.Memories.Get(ctx, shared.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: notes.ID}); err != nil || got.Content != "everyone's" {
				t.Errorf("read outside the write prefix: %v, %v", got, err)
			}
			if page, err := ms.Memories.List(ctx, notes.ID, anthropic.BetaMemoryStoreMemoryListParams{}); err != nil || len(page.Data) == 0 {
				t.Errorf("list the store: %v, %v", page, err)
			}
			if _, err := ms.MemoryVersions.Get(ctx, oldShared, anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: notes.ID}); err != nil {
				t.Errorf("read a version outside the write prefix: %v", err)
			}
			if got, err := ms.Memories.Get(ctx, refMem.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: ref.ID}); err != nil || got.Content != "read me" {
				t.Errorf("read the read_only store: %v, %v", got, err)
			}

			const outside, readOnly, unattached, wholeStore = "is outside it", "attaches memory store", "does not attach", "changes the whole store"
			refusals := []struct {
				name, says string
				call       func() error
			}{
				{"CreateOutside", outside, func() error {
					_, err := ms.Memories.New(ctx, notes.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/outside.md", Content: param.NewOpt("x")})
					return err
				}},
				{"CreateBesideThePrefix", outside, func() error {
					_, err := ms.Memories.New(ctx, notes.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/projects/p10/x.md", Content: param.NewOpt("x")})
					return err
				}},
				{"MoveOut", outside, func() error {
					_, err := ms.Memories.Update(ctx, mine.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: notes.ID, Path: param.NewOpt("/taken.md")})
					return err
				}},
				{"MoveOutWithContent", outside, func() error {
					_, err := ms.Memories.Update(ctx, mine.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: notes.ID, Path: param.NewOpt("/taken.md"), Content: param.NewOpt("x")})
					return err
				}},
				{"MoveIn", outside, func() error {
					_, err := ms.Memories.Update(ctx, shared.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: notes.ID, Path: param.NewOpt("/projects/p1/shared.md")})
					return err
				}},
				{"UpdateOutside", outside, func() error {
					_, err := ms.Memories.Update(ctx, shared.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: notes.ID, Content: param.NewOpt("mine now")})
					return err
				}},
				{"DeleteOutside", outside, func() error {
					_, err := ms.Memories.Delete(ctx, shared.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: notes.ID})
					return err
				}},
				{"RedactOutside", outside, func() error {
					_, err := ms.MemoryVersions.Redact(ctx, oldShared, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: notes.ID})
					return err
				}},
				{"UpdateStore", wholeStore, func() error {
					_, err := ms.Update(ctx, notes.ID, anthropic.BetaMemoryStoreUpdateParams{Name: param.NewOpt("Mine")})
					return err
				}},
				{"Restore", wholeStore, func() error {
					return post(c.client, "memfs/v1/memory_stores/"+notes.ID+"/restore", `{"as_of":"`+sess.ID+`"}`)
				}},
				{"Checkpoint", wholeStore, func() error {
					return post(c.client, "memfs/v1/memory_stores/"+notes.ID+"/checkpoints", `{"name":"mine"}`)
				}},
				{"CreateReadOnlyStore", readOnly, func() error {
					_, err := ms.Memories.New(ctx, ref.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/projects/p1/x.md", Content: param.NewOpt("x")})
					return err
				}},
				{"UpdateReadOnlyStore", readOnly, func() error {
					_, err := ms.Memories.Update(ctx, refMem.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: ref.ID, Content: param.NewOpt("x")})
					return err
				}},
				{"DeleteReadOnlyStore", readOnly, func() error {
					_, err := ms.Memories.Delete(ctx, refMem.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: ref.ID})
					return err
				}},
				{"ArchiveStore", wholeStore, func() error {
					_, err := ms.Archive(ctx, notes.ID, anthropic.BetaMemoryStoreArchiveParams{})
					return err
				}},
				{"DeleteStore", wholeStore, func() error {
					_, err := ms.Delete(ctx, notes.ID, anthropic.BetaMemoryStoreDeleteParams{})
					return err
				}},
			}
			if c.key == "" {
				// A key made for the session reaches only its stores
				// (another is 404, TestScopedKeyReachesOnlyItsStores);
				// a key of every store reaches them all.
				refusals = append(refusals, struct {
					name, says string
					call       func() error
				}{"CreateUnattachedStore", unattached, func() error {
					_, err := ms.Memories.New(ctx, other.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/projects/p1/x.md", Content: param.NewOpt("x")})
					return err
				}})
			}
			before := snapshot(t, e.db)
			for _, r := range refusals {
				t.Run(r.name, func(t *testing.T) {
					ae := wantAPIError(t, r.call(), http.StatusForbidden, httpapi.TypePermission)
					if !strings.Contains(ae.Message, r.says) || !strings.Contains(ae.Message, sess.ID) || !strings.HasSuffix(ae.Message, c.instead) {
						t.Errorf("refusal %q: want it to name session %s, say %q and end %q", ae.Message, sess.ID, r.says, c.instead)
					}
				})
			}
			if snapshot(t, e.db) != before {
				t.Error("a refused write changed the database")
			}
		})
	}

	t.Run("MemoryToolWithKeyForSession", func(t *testing.T) {
		// Without the header, a key made for a session is the session on
		// the memory tool's route too.
		url := toolServer(t, e)
		tool := func(cmd string) (int, string) {
			res, b := rawRequest(t, url, "POST", "/v1/memory_stores/"+notes.ID+"/memory_tool", map[string]string{"x-api-key": forSession}, cmd)
			return res.StatusCode, string(b)
		}
		if code, b := tool(`{"command":"create","path":"/memories/projects/p1/tool.md","file_text":"t"}`); code != http.StatusOK || contains(b, `"is_error":true`) {
			t.Errorf("tool create inside the write prefix: %d %s", code, b)
		}
		if code, b := tool(`{"command":"create","path":"/memories/tool.md","file_text":"t"}`); code != http.StatusForbidden || !contains(b, "permission_error") {
			t.Errorf("tool create outside the write prefix: %d %s, want 403 permission_error", code, b)
		}
		if code, b := tool(`{"command":"view","path":"/memories/shared.md"}`); code != http.StatusOK || !contains(b, "everyone's") {
			t.Errorf("tool view outside the write prefix: %d %s", code, b)
		}
	})

	t.Run("KeyWithoutSession", func(t *testing.T) {
		ms := e.client.Beta.MemoryStores
		m, err := ms.Memories.New(ctx, notes.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/anyone.md", Content: param.NewOpt("x")})
		if err != nil {
			t.Fatalf("a key with no session creates outside the prefix: %v", err)
		}
		if _, err := ms.Memories.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: notes.ID, Path: param.NewOpt("/projects/p1/anyone.md")}); err != nil {
			t.Fatalf("a key with no session moves into the prefix: %v", err)
		}
		if _, err := ms.Memories.New(ctx, ref.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/x.md", Content: param.NewOpt("x")}); err != nil {
			t.Fatalf("a key with no session writes a store the session attaches read_only: %v", err)
		}
		if _, err := ms.Memories.Delete(ctx, shared.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: notes.ID}); err != nil {
			t.Fatalf("a key with no session deletes outside the prefix: %v", err)
		}
	})
}

func scopedClientOf(e *env, secret string) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(secret), option.WithMaxRetries(0))
}

// post posts body to path (one of memfs's own routes, which the SDK has
// no method for) with c; a refusal is the SDK's error, for wantAPIError.
func post(c anthropic.Client, path, body string) error {
	return c.Post(ctx, path, []byte(body), nil)
}
