package main

// Two daemons mount one store: what one saves, the other shows within a
// second. Latencies are logged, not asserted beyond a generous bound.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// visibilityLimit is the one second a save may take to show elsewhere,
// doubled so a busy machine does not
// fail the test; samples above one second are counted in the log.
const visibilityLimit = 2 * time.Second

func isAbsent(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

func logLatencies(t *testing.T, what string, lat []time.Duration) {
	t.Helper()
	late := 0
	for _, d := range lat {
		if d > time.Second {
			late++
		}
	}
	t.Logf("%s over %d samples: p50 %v, p99 %v, max %v, over 1s: %d",
		what, len(lat), percentile(lat, 0.50), percentile(lat, 0.99), percentile(lat, 1), late)
}

func TestE2ETwoMountsVisibility(t *testing.T) {
	env := newE2EEnv(t)
	storeID, slug := env.createStore(t, "Shared Notes")
	session := strings.TrimSpace(env.cli(t, "session", "create", "--store", "Shared Notes"))
	if !strings.HasPrefix(session, "sesn_") {
		t.Fatalf("session create printed %q, want a sesn_ id", session)
	}
	mntA, mntB := mountDir(t), mountDir(t)
	env.startMount(t, mntA, "--session", session)
	env.startMount(t, mntB, "--store", "Shared Notes")
	dirA, dirB := filepath.Join(mntA, slug), filepath.Join(mntB, slug)

	t.Run("Mkdir", func(t *testing.T) {
		if err := os.Mkdir(filepath.Join(dirA, "shared"), 0o755); err != nil {
			t.Fatal(err)
		}
		isDir := func() bool {
			fi, err := os.Stat(filepath.Join(dirB, "shared"))
			return err == nil && fi.IsDir()
		}
		if _, ok := waitFor(isDir, time.Now(), visibilityLimit); !ok {
			t.Fatalf("a directory made in mount A is not in mount B after %v", visibilityLimit)
		}
	})

	t.Run("Saves", func(t *testing.T) {
		const saves = 120
		pathA, pathB := filepath.Join(dirA, "vis.txt"), filepath.Join(dirB, "vis.txt")
		var lat []time.Duration
		for i := 0; i < saves; i++ {
			// Same length every time: a stale page cache cannot hide
			// behind a size change.
			want := fmt.Sprintf("save %04d\n", i)
			if err := os.WriteFile(pathA, []byte(want), 0o644); err != nil {
				t.Fatalf("save %d in mount A: %v", i, err)
			}
			d, ok := waitContent(pathB, want, time.Now(), visibilityLimit)
			if !ok {
				got, err := os.ReadFile(pathB)
				t.Fatalf("save %d in mount A not visible in mount B after %v: B reads %q, %v", i, visibilityLimit, got, err)
			}
			lat = append(lat, d)
		}
		logLatencies(t, "A→B save visibility", lat)
	})

	t.Run("NewFiles", func(t *testing.T) {
		// B looks first, so its kernel holds a negative entry that the
		// create in A must get past.
		const files = 50
		var lat []time.Duration
		for i := 0; i < files; i++ {
			name := fmt.Sprintf("shared/new%02d.txt", i)
			if !isAbsent(filepath.Join(dirB, name)) {
				t.Fatalf("%s exists in mount B before mount A made it", name)
			}
			want := fmt.Sprintf("new %d\n", i)
			if err := os.WriteFile(filepath.Join(dirA, name), []byte(want), 0o644); err != nil {
				t.Fatalf("create %s in mount A: %v", name, err)
			}
			d, ok := waitContent(filepath.Join(dirB, name), want, time.Now(), visibilityLimit)
			if !ok {
				t.Fatalf("%s made in mount A not in mount B after %v", name, visibilityLimit)
			}
			lat = append(lat, d)
		}
		logLatencies(t, "A→B new-file visibility", lat)
	})

	t.Run("RenameAndDelete", func(t *testing.T) {
		const rounds = 20
		var lat []time.Duration
		for i := 0; i < rounds; i++ {
			from, to := fmt.Sprintf("shared/new%02d.txt", i), fmt.Sprintf("shared/moved%02d.txt", i)
			if _, err := os.ReadFile(filepath.Join(dirB, from)); err != nil {
				t.Fatalf("read %s in mount B: %v", from, err)
			}
			if err := os.Rename(filepath.Join(dirA, from), filepath.Join(dirA, to)); err != nil {
				t.Fatalf("rename in mount A: %v", err)
			}
			moved := func() bool {
				got, err := os.ReadFile(filepath.Join(dirB, to))
				return err == nil && string(got) == fmt.Sprintf("new %d\n", i) && isAbsent(filepath.Join(dirB, from))
			}
			d, ok := waitFor(moved, time.Now(), visibilityLimit)
			if !ok {
				t.Fatalf("rename %s → %s in mount A not seen by mount B after %v", from, to, visibilityLimit)
			}
			lat = append(lat, d)
			if err := os.Remove(filepath.Join(dirA, to)); err != nil {
				t.Fatalf("remove in mount A: %v", err)
			}
			d, ok = waitFor(func() bool { return isAbsent(filepath.Join(dirB, to)) }, time.Now(), visibilityLimit)
			if !ok {
				t.Fatalf("%s removed in mount A still in mount B after %v", to, visibilityLimit)
			}
			lat = append(lat, d)
		}
		logLatencies(t, "A→B rename and delete visibility", lat)
	})

	t.Run("Attribution", func(t *testing.T) {
		vs := env.versionList(t, storeID)
		if len(vs) == 0 {
			t.Fatal("no versions after the saves")
		}
		for _, v := range vs {
			if v.CreatedBy == nil || v.CreatedBy.Type != "session_actor" || v.CreatedBy.ID != session {
				t.Fatalf("version %s by %+v, want session_actor %s (mount A is that session's)", v.ID, v.CreatedBy, session)
			}
		}
	})
}
