package versions_test

import (
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// The web page's sign-ins in the database (on PostgreSQL too with
// MEMFS_TEST_POSTGRES): found by their cookie only, touched, ended one at a
// time, when stale at another's start, beyond a key's limit, and all at once when their key
// is revoked.
func TestUISessions(t *testing.T) {
	db := openDB(t)
	key, _, err := db.CreateAPIKey(ctx, "browser")
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := db.CreateAPIKey(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	// startEnding starts a sign-in and ends those last used before
	// idleSince or begun before startedBefore; start ends none.
	startEnding := func(token, keyID string, at, idleSince, startedBefore time.Time) {
		t.Helper()
		if err := db.CreateUISession(ctx, token, versions.UISession{KeyID: keyID, CSRF: "csrf-" + token, CreatedAt: at, LastSeenAt: at}, idleSince, startedBefore); err != nil {
			t.Fatalf("CreateUISession %s: %v", token, err)
		}
	}
	longAgo := t0.Add(-24 * time.Hour)
	start := func(token, keyID string, at time.Time) {
		t.Helper()
		startEnding(token, keyID, at, longAgo, longAgo)
	}
	live := func(token string) *versions.UISession {
		t.Helper()
		s, err := db.GetUISession(ctx, token)
		if versions.ErrorCode(err) == versions.CodeNotFound {
			return nil
		}
		if err != nil {
			t.Fatalf("GetUISession %s: %v", token, err)
		}
		return s
	}

	start("a", key.ID, t0)
	got := live("a")
	if got == nil || got.KeyID != key.ID || got.CSRF != "csrf-a" || !got.CreatedAt.Equal(t0) || !got.LastSeenAt.Equal(t0) {
		t.Fatalf("GetUISession = %+v", got)
	}
	if live("b") != nil {
		t.Fatal("an unknown cookie found a sign-in")
	}

	t1 := t0.Add(time.Minute)
	if err := db.TouchUISession(ctx, "a", t1); err != nil {
		t.Fatal(err)
	}
	if err := db.TouchUISession(ctx, "a", t0); err != nil {
		t.Fatal(err)
	}
	if got := live("a"); !got.LastSeenAt.Equal(t1) || !got.CreatedAt.Equal(t0) {
		t.Fatalf("after touching at %v then %v: %+v", t1, t0, got)
	}

	if err := db.EndUISession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if live("a") != nil {
		t.Fatal("an ended sign-in is still found")
	}
	if err := db.EndUISession(ctx, "a"); err != nil {
		t.Fatalf("ending twice: %v", err)
	}

	// A sign-in ends the stale ones: idle since before t1, or begun
	// before t0.
	start("idle", key.ID, t0)
	start("old", key.ID, t0.Add(-time.Hour))
	start("recent", key.ID, t1)
	if err := db.TouchUISession(ctx, "old", t1); err != nil {
		t.Fatal(err)
	}
	startEnding("fresh", key.ID, t1, t1, t0)
	if live("idle") != nil || live("old") != nil || live("recent") == nil || live("fresh") == nil {
		t.Fatal("a sign-in ended the wrong stale sign-ins")
	}
	if err := db.EndUISession(ctx, "recent"); err != nil {
		t.Fatal(err)
	}

	// A key's oldest sign-ins go beyond the limit; another key's stay.
	start("other", other.ID, t0)
	for i := range versions.MaxUISessionsPerKey {
		start("many-"+string(rune('A'+i/26))+string(rune('a'+i%26)), key.ID, t1.Add(time.Duration(i+1)*time.Second))
	}
	if live("fresh") != nil {
		t.Fatal("the key's oldest sign-in outlived the limit")
	}
	if live("many-Aa") == nil || live("other") == nil {
		t.Fatal("the limit ended a newer sign-in, or another key's")
	}

	// Revoking a key ends its sign-ins at once, and only its.
	if _, err := db.RevokeAPIKey(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	if live("many-Aa") != nil {
		t.Fatal("a revoked key's sign-in is still found")
	}
	if live("other") == nil {
		t.Fatal("revoking a key ended another key's sign-in")
	}

	// A sign-in needs a key that exists.
	if err := db.CreateUISession(ctx, "missing-key", versions.UISession{KeyID: "apikey_none", CSRF: "x", CreatedAt: t0, LastSeenAt: t0}, longAgo, longAgo); err == nil {
		t.Fatal("a sign-in of no key was recorded")
	}
}
