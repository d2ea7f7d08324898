package versions_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
)

// A store keeps at most its limit of directories: one more mkdir is
// refused with CodeStoreFull naming the limit; removing one makes room; a
// directory emptied at the limit is not kept rather than refusing the
// delete.
func TestDirectoryLimit(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{MaxDirectories: 5})
	if s.MaxDirectories != 5 {
		t.Fatalf("directory limit %d, want 5", s.MaxDirectories)
	}
	if d := newStore(t, db, versions.StoreParams{}); d.MaxDirectories != versions.DefaultMaxDirectories {
		t.Fatalf("default directory limit %d, want %d", d.MaxDirectories, versions.DefaultMaxDirectories)
	}
	for i := range 5 {
		ok(t, db.MakeDir(ctx, s.ID, fmt.Sprintf("/d%d", i)))
	}
	e := wantCode(t, db.MakeDir(ctx, s.ID, "/d5"), versions.CodeStoreFull)
	if !strings.Contains(e.Message, "5 directories") {
		t.Errorf("message %q does not name the limit", e.Message)
	}
	ok(t, db.RemoveDir(ctx, s.ID, "/d0"))
	ok(t, db.MakeDir(ctx, s.ID, "/d5"))

	// At the limit, deleting the only memory of /k does not keep /k.
	create(t, db, s.ID, "/k/x.md", "x")
	ok(t, db.DeleteMemory(ctx, s.ID, "/k/x.md", versions.MemoryDelete{}, me))
	if _, err := db.Stat(ctx, s.ID, "/k"); versions.ErrorCode(err) != versions.CodeNotFound {
		t.Errorf("/k after its last memory went at the directory limit: %v, want not found", err)
	}
	wantCode(t, db.MakeDir(ctx, s.ID, "/d6"), versions.CodeStoreFull)
}

// Directories count toward the history quota with their paths: mkdirs of
// long names reach it with the quota's error, whatever the directory limit.
func TestDirectoriesCountTowardQuota(t *testing.T) {
	db := openDB(t)
	quota := 64 << 10
	s := newStore(t, db, versions.StoreParams{MaxHistoryBytes: quota, MaxDirectories: 100000})
	made := 0
	var err error
	for ; made < 10000; made++ {
		if err = db.MakeDir(ctx, s.ID, fmt.Sprintf("/%0250d", made)); err != nil {
			break
		}
	}
	e := wantCode(t, err, versions.CodeOverQuota)
	if !strings.Contains(e.Message, "directory") || !strings.Contains(e.Message, fmt.Sprint(quota)) {
		t.Errorf("message %q does not say a directory passes the quota", e.Message)
	}
	if max := quota / (2*251 + versions.VersionRecordBytes); made > max {
		t.Errorf("%d directories of 251-byte paths fit a %d-byte quota, want at most %d", made, quota, max)
	}
}
