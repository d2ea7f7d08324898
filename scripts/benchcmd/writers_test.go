package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWritersOnDisk runs both variants with real writer processes (the
// test binary stands in for the bench's, see TestMain) on a plain
// directory, where no save may fail or be lost.
func TestWritersOnDisk(t *testing.T) {
	for _, v := range writerVariants {
		t.Run(v, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			res, err := runWriters(context.Background(), dir, v, 3, 200*time.Millisecond, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors != 0 || res.Saves == 0 || res.SavesPerSec <= 0 {
				t.Fatalf("%d writers on disk: %+v, want saves and no error", 3, res)
			}
			heads, err := readHeads(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			want := 3 * writerFiles
			if v == "shared" {
				want = writerFiles
			}
			if len(heads) != want {
				t.Errorf("%d files after the writers, want %d", len(heads), want)
			}
		})
	}
}

func TestLostSaves(t *testing.T) {
	last := map[string]map[string]bool{
		"shared/f000.md": {"writer 0 save 7": true, "writer 1 save 9": true},
		"shared/f001.md": {"writer 1 save 4": true},
		"shared/f002.md": {"writer 2 save 5": true},
	}
	heads := map[string]string{
		"shared/f000.md": "writer 1 save 9", // a last save: fine
		"shared/f001.md": "writer 1 save 3", // an earlier save: lost
	} // f002 is missing: lost
	n, first := lostSaves(last, heads)
	if n != 2 {
		t.Errorf("lostSaves = %d, want 2 (a stale file and a missing one)", n)
	}
	if !strings.Contains(first, "shared/f001.md") || !strings.Contains(first, `"writer 1 save 3"`) {
		t.Errorf("the first lost save is described as %q, want f001 and what it holds", first)
	}
	if n, _ := lostSaves(last, map[string]string{"shared/f000.md": "writer 0 save 7", "shared/f001.md": "writer 1 save 4", "shared/f002.md": "writer 2 save 5"}); n != 0 {
		t.Errorf("lostSaves = %d with every file at a last save, want 0", n)
	}
}

// TestHeadsNoticesShortFile: a file cut short does not read as a save.
func TestHeadsNoticesShortFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.md"), []byte("writer 0 save 1\nshort"), 0o644); err != nil {
		t.Fatal(err)
	}
	heads, err := readHeads(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := heads["f.md"]; got == "writer 0 save 1" {
		t.Errorf("a %d-byte file reads as the save %q", len("writer 0 save 1\nshort"), got)
	}
}

func TestGoals(t *testing.T) {
	cfg, err := parseFlags([]string{"--targets", "loopback,memfs"})
	if err != nil {
		t.Fatal(err)
	}
	rep := newReport(cfg, t.TempDir())
	ops := map[string]int{}
	loop, mem := map[string]float64{}, map[string]float64{}
	for _, p := range phaseNames {
		ops[p], loop[p], mem[p] = 1000, 1.0, 1.25 // memfs at 0.8 of the loopback
	}
	rep.addRound("loopback", loop, ops)
	rep.addRound("memfs", mem, ops)
	rep.addWritersRound("own", "loopback", &writersRound{SavesPerSec: 1000})
	rep.addWritersRound("own", "memfs", &writersRound{SavesPerSec: 1200})
	rep.addWritersRound("shared", "loopback", &writersRound{SavesPerSec: 1000})
	rep.addWritersRound("shared", "memfs", &writersRound{SavesPerSec: 1500, Errors: 1, FirstError: "lost"})
	rep.Visibility = &visibilityResult{Samples: 10, P99MS: 20}
	rep.RSS = &rssResult{Stores: 8, MemoriesPerStore: 200, MemfsPeakMiB: 40}
	rep.finish()
	got := map[string]string{}
	for _, g := range rep.Goals {
		got[g.Name] = g.figure() + " " + g.target() + " " + g.met()
	}
	for name, want := range map[string]string{
		"create, memfs/loopback ops/s":                       "0.80× ≥ 0.6× yes",
		"read, memfs/loopback ops/s":                         "0.80× ≥ 2.0× NO",
		"8 writers, own files, memfs/loopback saves/s":       "1.20× ≥ 0.8× yes",
		"8 writers, 50 shared files, memfs/loopback saves/s": "1.50× ≥ 0.8× NO (1 failed or lost saves)",
		"save-to-visible p99, another mount":                 "20.0 ms ≤ 50 ms yes",
		"daemon peak RSS, 8 stores × 2,000 memories":         "40.0 MiB ≤ 96 MiB - (measured with 8 × 200)",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if len(rep.Goals) != len(goalPhases)+4 {
		t.Errorf("%d targets, want %d", len(rep.Goals), len(goalPhases)+4)
	}
	var md strings.Builder
	if err := writeMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| create, memfs/loopback ops/s | 0.80× | ≥ 0.6× | yes |") {
		t.Errorf("the markdown has no row for create:\n%s", md.String())
	}
	var text strings.Builder
	if err := writeText(&text, rep); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "daemon peak RSS") {
		t.Errorf("the text report ends with %q, want the targets table's last row", last)
	}
}

// TestWritersOnMemfs: on a memfs mount, with default durability, every
// save of a writer's own file is a version of its own, overlapping saves of
// a shared file share one, and none is lost.
func TestWritersOnMemfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	tg, err := memfsTarget(context.Background(), t.TempDir(), "memfs", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tg.stop(); err != nil {
			t.Errorf("stop memfs: %v", err)
		}
	})
	for _, v := range writerVariants {
		res, err := runWriters(context.Background(), filepath.Join(tg.dir, v), v, 4, 300*time.Millisecond, tg.versionCount)
		if err != nil {
			t.Fatal(err)
		}
		if res.Errors != 0 || res.Saves == 0 || res.Versions+res.Merged != res.Saves || (v == "own" && res.Merged != 0) {
			t.Errorf("4 writers (%s files) on memfs: %d saves, %d versions, %d merged, %d errors (%s); want saves, a version for each (own files) or for each not merged (shared), no error",
				v, res.Saves, res.Versions, res.Merged, res.Errors, res.FirstError)
		}
	}
}

// TestWritersNoticeMissingVersions: saves the store did not commit are
// errors, whatever the files show.
func TestWritersNoticeMissingVersions(t *testing.T) {
	still := func(context.Context) (int, error) { return 4096, nil }
	res, err := runWriters(context.Background(), filepath.Join(t.TempDir(), "w"), "own", 2, 100*time.Millisecond, still)
	if err != nil {
		t.Fatal(err)
	}
	if res.Saves == 0 || res.Errors == 0 || !strings.Contains(res.FirstError, "not one version per save") {
		t.Errorf("%d saves with no version committed: %d errors (%q), want them counted", res.Saves, res.Errors, res.FirstError)
	}
}
