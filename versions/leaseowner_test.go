package versions_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// A mount whose lease lapsed acts on nothing it held, nor on anyone
// else's pending file: every change it asks for fails as lost, before and
// after recovery took its files, and after it took a new lease. Recovery
// publishes what it held; another mount's file is left alone; pending ids
// are never given twice.
func TestLapsedMountOwnsNothing(t *testing.T) {
	dsn := testDSN(t)
	open := func() *versions.DB {
		db, err := versions.Open(dsn, versions.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	stopped, other := open(), open()
	st := newStore(t, stopped, versions.StoreParams{Name: "Owners"})
	lease := versions.MountLease{ID: "mnt_stopped", SessionID: "sesn_stopped", Host: "a", Mountpoint: "/mnt/memory"}
	ok(t, stopped.StartMount(ctx, lease))
	held, err := stopped.SavePending(ctx, st.ID, lease.Owner(), "/.tmp-1-held", "held", me, 0)
	ok(t, err)

	// Its lease lapses while it is stopped: it can no longer publish its
	// own file, though nobody recovered it yet.
	time.Sleep(versions.LeaseTTL + 200*time.Millisecond)
	if _, _, err := stopped.PublishPending(ctx, st.ID, lease.Owner(), held, "/.tmp-1-held"); !versions.IsPendingLost(err) {
		t.Fatalf("a lapsed mount publishing its file: %v, want lost", err)
	}

	// Another mount saves files; its handle's calls recover the stopped
	// mount's file.
	holdLease(t, other, "mnt_other")
	mine, err := other.SavePending(ctx, st.ID, owned("mnt_other"), "/.tmp-2-other", "other's", me, 0)
	ok(t, err)
	if mine <= held {
		t.Errorf("pending id %d after %d: ids must only grow", mine, held)
	}
	var m *versions.Memory
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if m, err = other.GetMemory(ctx, st.ID, "/.tmp-1-held"); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || *m.Content != "held" {
		t.Fatalf("the stopped mount's file after recovery: %v, %v", m, err)
	}

	// Resumed, it finds its lease lapsed and takes a new one at a new epoch.
	lapsed, err := stopped.RenewMount(ctx, &lease)
	ok(t, err)
	if !lapsed || lease.Epoch == 0 {
		t.Fatalf("renewal after the lapse: lapsed %v, epoch %d; want lapsed and a new epoch", lapsed, lease.Epoch)
	}
	if s := stopped.LeaseStats(); s.Lapses != 1 {
		t.Errorf("lapses counted %d, want 1", s.Lapses)
	}
	for _, id := range []int64{held, mine} {
		if _, _, err := stopped.PublishPending(ctx, st.ID, lease.Owner(), id, "/target.md"); !versions.IsPendingLost(err) {
			t.Errorf("the resumed mount publishing pending file %d: %v, want lost", id, err)
		}
		if err := stopped.DropPending(ctx, st.ID, lease.Owner(), id); !versions.IsPendingLost(err) {
			t.Errorf("the resumed mount dropping pending file %d: %v, want lost", id, err)
		}
		if _, err := stopped.SavePending(ctx, st.ID, lease.Owner(), "/x.tmp", "overwritten", me, id); !versions.IsPendingLost(err) {
			t.Errorf("the resumed mount saving over pending file %d: %v, want lost", id, err)
		}
	}
	files, err := other.PendingFiles(ctx, st.ID)
	ok(t, err)
	if len(files) != 1 || files[0].ID != mine || files[0].Mount != "mnt_other" || files[0].State != versions.PendingLive || files[0].Size != len("other's") {
		t.Fatalf("pending files %+v, want the other mount's alone, live", files)
	}
	wantCode(t, errOf(other.GetMemory(ctx, st.ID, "/target.md")), versions.CodeNotFound)
	// A live mount's file cannot be settled by hand either.
	wantCode(t, errOf(other.SettlePending(ctx, st.ID, mine, true)), versions.CodeConflict)

	// Its new lease works for new files, and ids still grow.
	next, err := stopped.SavePending(ctx, st.ID, lease.Owner(), "/.tmp-3-new", "new", me, 0)
	ok(t, err)
	ok(t, stopped.DropPending(ctx, st.ID, lease.Owner(), next))
	again, err := stopped.SavePending(ctx, st.ID, lease.Owner(), "/.tmp-4-new", "new", me, 0)
	ok(t, err)
	if again <= next {
		t.Errorf("pending id %d after %d was dropped: an id was given twice", again, next)
	}
}

// Recovery does not starve: 300 lapsed files a store cannot take (over
// its history quota) are marked unpublishable in one go, and another
// store's lapsed file is published within a sweep of its lease's lapse.
// They stay listed with why, and can be dropped by hand.
func TestRecoveryPagesPastUnpublishable(t *testing.T) {
	dsn := testDSN(t)
	dead, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	full := newStore(t, dead, versions.StoreParams{Name: "Over quota"})
	other := newStore(t, dead, versions.StoreParams{Name: "Other"})
	a := versions.MountLease{ID: "mnt_a", SessionID: "sesn_a", Host: "a", Mountpoint: "/mnt/memory"}
	b := versions.MountLease{ID: "mnt_b", SessionID: "sesn_b", Host: "b", Mountpoint: "/mnt/memory"}
	ok(t, dead.StartMount(ctx, a))
	for i := range 300 {
		_, err := dead.SavePending(ctx, full.ID, a.Owner(), fmt.Sprintf("/.tmp-%03d", i), "unpublishable", me, 0)
		ok(t, err)
	}
	ok(t, dead.StartMount(ctx, b))
	_, err = dead.SavePending(ctx, other.ID, b.Owner(), "/.tmp-b", "saved before the kill", me, 0)
	ok(t, err)
	ok(t, dead.Close()) // killed: the leases are left to lapse
	lapsedAt := time.Now().Add(versions.LeaseTTL)

	cli, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	t.Cleanup(func() { cli.Close() })
	quota := 1000
	_, err = cli.UpdateStore(ctx, full.ID, versions.StoreUpdate{MaxHistoryBytes: &quota})
	ok(t, err)
	time.Sleep(time.Until(lapsedAt))
	var m *versions.Memory
	for {
		if m, err = cli.GetMemory(ctx, other.ID, "/.tmp-b"); err == nil || time.Since(lapsedAt) > 3*time.Second {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the other store's file %v after its lease lapsed: %v", time.Since(lapsedAt), err)
	}
	t.Logf("published %v after the lease lapsed", time.Since(lapsedAt).Round(time.Millisecond))
	if *m.Content != "saved before the kill" {
		t.Errorf("published content %q", *m.Content)
	}
	files, err := cli.PendingFiles(ctx, full.ID)
	ok(t, err)
	if len(files) != 300 {
		t.Fatalf("%d pending files left in the store over its quota, want 300", len(files))
	}
	for _, f := range files {
		if f.State != versions.PendingUnpublishable || f.Failure == "" || f.FailedAt == nil {
			t.Fatalf("pending file %+v: want unpublishable, with why", f)
		}
	}
	// The sweep counts what it left once it is through.
	for deadline := time.Now().Add(3 * time.Second); cli.LeaseStats().Backlog != 300 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if s := cli.LeaseStats(); s.Unpublishable < 300 || s.Backlog != 300 || s.Recovered != 1 {
		t.Errorf("stats %+v: want 300 unpublishable, a backlog of 300, 1 recovered", s)
	}
	wantCode(t, errOf(cli.SettlePending(ctx, full.ID, files[0].ID, true)), versions.CodeOverQuota)
	ok(t, errOf(cli.SettlePending(ctx, full.ID, files[0].ID, false)))
	wantCode(t, errOf(cli.SettlePending(ctx, full.ID, files[0].ID, false)), versions.CodeNotFound)
}
