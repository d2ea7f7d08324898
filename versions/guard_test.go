package versions_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/guard/guardtest"
	"github.com/memfs/memfs/versions"
)

// wantRefused checks a guard refusal: it names the rule, echoes nothing of
// the secret, and says how to get past it.
func wantRefused(t *testing.T, err error, c guardtest.Credential) {
	t.Helper()
	e := wantCode(t, err, versions.CodeCredential)
	if e == nil {
		return
	}
	if !strings.Contains(e.Message, "rule "+c.Rule) {
		t.Errorf("refusal %q does not name rule %s", e.Message, c.Rule)
	}
	if strings.Contains(e.Message, c.Secret) || strings.Contains(e.Message, c.Secret[:12]) {
		t.Errorf("refusal %q echoes the secret", e.Message)
	}
	if !strings.Contains(e.Message, "--guard warn") {
		t.Errorf("refusal %q does not say how to get past it", e.Message)
	}
}

func TestGuardRefuses(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	if s.Guard != guard.Refuse {
		t.Fatalf("new store's guard %q, want refuse", s.Guard)
	}
	m := create(t, db, s.ID, "/notes.md", "# notes\n")
	holdLease(t, db, "mount-1")
	for _, c := range guardtest.All() {
		t.Run(c.Kind, func(t *testing.T) {
			_, err := db.CreateMemory(ctx, s.ID, "/new-"+c.Kind+".md", c.Text, me)
			wantRefused(t, err, c)
			_, err = db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("# notes\n" + c.Text)}, me)
			wantRefused(t, err, c)
			_, err = db.SavePending(ctx, s.ID, owned("mount-1"), "/pending-"+c.Kind+".md", c.Text, me, 0)
			wantRefused(t, err, c)
		})
	}
	got, err := db.GetMemory(ctx, s.ID, m.ID)
	ok(t, err)
	if *got.Content != "# notes\n" || got.VersionID != m.VersionID {
		t.Fatalf("head moved: %q at %s", *got.Content, got.VersionID)
	}
	if n := countVersions(t, db, s.ID); n != 1 {
		t.Fatalf("%d versions, want 1", n)
	}
}

// TestGuardChecksWhatIsAdded: on a store that warned, a later save that
// keeps the credential's line and changes another is not refused; one that
// adds a credential is.
func TestGuardChecksWhatIsAdded(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{Guard: guard.Warn})
	c := guardtest.One("github")
	m := create(t, db, s.ID, "/notes.md", "# notes\n"+c.Text)
	refuse := guard.Refuse
	if _, err := db.UpdateStore(ctx, s.ID, versions.StoreUpdate{Guard: &refuse}); err != nil {
		t.Fatal(err)
	}
	m = update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("# notes\n" + c.Text + "more\n")})
	d := guardtest.One("anthropic")
	_, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("# notes\n" + c.Text + "more\n" + d.Text)}, me)
	wantRefused(t, err, d)
	if e := versions.ErrorCode(err); e == versions.CodeCredential && strings.Contains(err.Error(), "github-pat") {
		t.Errorf("refusal %q names the line the memory already held", err)
	}
}

func TestGuardWarnAndOff(t *testing.T) {
	db := openDB(t)
	var mu sync.Mutex
	var events []versions.GuardEvent
	db.SetGuardObserver(func(e versions.GuardEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	})
	c := guardtest.One("aws")
	warn := newStore(t, db, versions.StoreParams{Guard: guard.Warn})
	m := create(t, db, warn.ID, "/creds.md", c.Text)
	if *m.Content != c.Text {
		t.Fatalf("warn kept %q", *m.Content)
	}
	off := newStore(t, db, versions.StoreParams{Guard: guard.Off})
	create(t, db, off.ID, "/creds.md", c.Text)
	mu.Lock()
	defer mu.Unlock()
	// The key id and its secret are two findings, each warned once; the
	// store that is off tells nothing.
	if len(events) != 2 || events[0].Rule != "aws-access-token" || events[0].Line != 1 || events[1].Rule != "aws-secret-access-key" || events[1].Line != 2 {
		t.Fatalf("events %+v, want warnings of aws-access-token at line 1 and aws-secret-access-key at line 2", events)
	}
	for _, e := range events {
		if e.Refused || e.StoreID != warn.ID || e.Path != "/creds.md" {
			t.Fatalf("event %+v, want a warning about /creds.md in %s", e, warn.ID)
		}
	}
	got, err := db.GetStore(ctx, off.ID)
	ok(t, err)
	if got.Guard != guard.Off {
		t.Fatalf("stored guard %q, want off", got.Guard)
	}
	bad := versions.GuardPolicy("loud")
	wantCode(t, errOf(db.UpdateStore(ctx, off.ID, versions.StoreUpdate{Guard: &bad})), versions.CodeInvalid)
}

func TestScanStore(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{Guard: guard.Off})
	c := guardtest.One("stripe")
	m := create(t, db, s.ID, "/a.md", "line one\n"+c.Text)
	old := m.VersionID
	m = update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("line one\nclean now\n")})
	h := create(t, db, s.ID, "/b.md", c.Text)
	var got []versions.ScanFinding
	ok(t, db.ScanStore(ctx, s.ID, func(f versions.ScanFinding) error {
		got = append(got, f)
		return nil
	}))
	if len(got) != 2 || got[0].VersionID != old || got[0].Head || got[0].Line != 2 || got[0].Rule != "stripe-access-token" ||
		got[1].VersionID != h.VersionID || !got[1].Head || got[1].Path != "/b.md" {
		t.Fatalf("findings %+v", got)
	}
}

func TestGuardEditMemory(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/notes.md", "# notes\n")
	c := guardtest.One("openai")
	_, err := db.EditMemory(ctx, s.ID, "/notes.md", func(old string) (string, error) { return old + c.Text, nil }, me)
	wantRefused(t, err, c)
	got, err := db.GetMemory(ctx, s.ID, m.ID)
	ok(t, err)
	if got.VersionID != m.VersionID {
		t.Fatalf("head moved to %s", got.VersionID)
	}
}
