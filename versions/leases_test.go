package versions_test

import (
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// A mount whose lease lapsed leaves nothing waiting for it: the next handle
// to use the database publishes its pending files, attributed to the
// session that saved them, and ends its session. A live mount's pending
// files are left alone, whoever looks.
func TestLapsedLeasePublishes(t *testing.T) {
	dsn := testDSN(t)
	open := func(o versions.Options) *versions.DB {
		db, err := versions.Open(dsn, o)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	dead := open(versions.Options{})
	st := newStore(t, dead, versions.StoreParams{Name: "Leases"})
	sess, err := dead.CreateSession(ctx, []versions.AttachmentParams{{StoreID: st.ID}})
	ok(t, err)
	by := versions.SessionActor(sess.ID)
	ok(t, dead.StartMount(ctx, versions.MountLease{ID: "mnt_dead", SessionID: sess.ID, Host: "a", Mountpoint: "/mnt/memory"}))
	_, err = dead.SavePending(ctx, st.ID, owned("mnt_dead"), "/.tmp-1-abc", "acknowledged", by, 0)
	ok(t, err)

	// Another mount at the same path, alive: its file is its own.
	alive := open(versions.Options{})
	holdLease(t, alive, "mnt_alive")
	_, err = alive.SavePending(ctx, st.ID, owned("mnt_alive"), "/.tmp-2-def", "still being written", me, 0)
	ok(t, err)

	// Past the dead mount's lease; the live one renews meanwhile.
	time.Sleep(versions.LeaseTTL + 200*time.Millisecond)
	cli := open(versions.Options{})
	got, err := cli.GetMemory(ctx, st.ID, "/.tmp-1-abc")
	if err != nil {
		t.Fatalf("the dead mount's file after its lease lapsed: %v, want it published", err)
	}
	if *got.Content != "acknowledged" {
		t.Errorf("published content %q", *got.Content)
	}
	if h := history(t, cli, st.ID, got.ID); len(h) != 1 || h[0].Operation != versions.OpCreated || h[0].CreatedBy == nil || *h[0].CreatedBy != by {
		t.Errorf("history of the published file %+v, want one created by %v", h, by)
	}
	s, err := cli.GetSession(ctx, sess.ID)
	ok(t, err)
	if s.EndedAt == nil {
		t.Errorf("the session of the dead mount is not ended")
	}
	wantCode(t, errOf(cli.GetMemory(ctx, st.ID, "/.tmp-2-def")), versions.CodeNotFound)
	if live, err := alive.LiveMount(ctx, "mnt_alive"); err != nil || !live {
		t.Errorf("the live mount's lease: %v, %v", live, err)
	}
	if live, err := alive.LiveMount(ctx, "mnt_dead"); err != nil || live {
		t.Errorf("the dead mount's lease: live %v, %v", live, err)
	}
}
