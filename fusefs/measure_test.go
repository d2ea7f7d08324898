package fusefs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// TestMeasureTempGaps measures, for each tool whose saves go through a
// temporary name or a held backup, how long the daemon keeps the
// temporary file pending (its close to its rename or removal) and the
// backup held (the rename away to the save of the new file), with two busy
// loops competing for the CPU. It asserts nothing: it is the figure the
// grace is chosen from (pending.go). Run it with
// MEMFS_MEASURE_GAPS=<edits per tool> go test -run TestMeasureTempGaps -v ./fusefs/
func TestMeasureTempGaps(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("MEMFS_MEASURE_GAPS"))
	if runs <= 0 {
		t.Skip("set MEMFS_MEASURE_GAPS to the number of edits per tool")
	}
	for range 2 {
		busy := exec.Command("sh", "-c", "while :; do :; done")
		if err := busy.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { busy.Process.Kill(); busy.Wait() })
	}
	typekeys, _ := filepath.Abs("testdata/typekeys.py")
	tools := []struct {
		name string
		cmd  []string
		runs int
	}{
		{"sed -i", []string{"sh", "-c", `sed -i 's/one/two/;s/two/one/' notes.md`}, runs},
		{"perl -pi", []string{"perl", "-pi", "-e", "s/one/two/"}, runs},
		{"python tempfile+os.replace", []string{"python3", "-c", `
import os, tempfile
fd, tmp = tempfile.mkstemp(dir=".")
os.write(fd, b"line two\n")
os.fsync(fd)
os.close(fd)
os.replace(tmp, "notes.md")`}, runs},
		{"SDK .tmp-<pid>-<uuid>", []string{"python3", "-c", `
import os, uuid
tmp = ".tmp-%d-%s" % (os.getpid(), uuid.uuid4())
with open(tmp, "w") as f:
    f.write("line two\n")
os.rename(tmp, "notes.md")`}, runs},
		{"cp x y.tmp && mv", []string{"sh", "-c", `cp notes.md notes.md.tmp && mv notes.md.tmp notes.md`}, runs},
		{"git-style x.lock", []string{"sh", "-c", `printf 'line two\n' > notes.md.lock && mv notes.md.lock notes.md`}, runs},
		{"vim", []string{"python3", typekeys, "0.5", strconv.Quote("Otwo\x1b\x00:wq\r"), "vim", "-N", "-u", "DEFAULTS", "-i", "NONE", "notes.md"}, min(runs, 5)},
		{"nano", []string{"python3", typekeys, "0.5", strconv.Quote("two\r\x00\x0f\x00\r\x00\x18"), "nano", "--locking", "notes.md"}, min(runs, 5)},
		{"emacs", []string{"python3", typekeys, "0.5", strconv.Quote("two\n\x00\x18\x13\x00\x18\x03"), "emacs", "-nw", "-Q", "notes.md"}, min(runs, 5)},
	}
	gap := regexp.MustCompile(`(pending_for|held_for)=([0-9.]+[µnm]?s)`)
	for _, tool := range tools {
		if _, err := exec.LookPath(tool.cmd[0]); err != nil {
			t.Logf("%s: not installed", tool.name)
			continue
		}
		te := newToolEnv(t)
		for range tool.runs {
			c := exec.Command(tool.cmd[0], tool.cmd[1:]...)
			if tool.name == "perl -pi" {
				c.Args = append(c.Args, "notes.md")
			}
			c.Dir = te.dir
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tool.name, err, out)
			}
		}
		gaps := map[string][]time.Duration{}
		for _, m := range gap.FindAllStringSubmatch(te.e.log.String(), -1) {
			d, err := time.ParseDuration(m[2])
			if err == nil {
				gaps[m[1]] = append(gaps[m[1]], d)
			}
		}
		if len(gaps) == 0 {
			t.Logf("%-28s no temporary file, no held backup (saved in place)", tool.name)
		}
		for kind, ds := range gaps {
			slices.Sort(ds)
			t.Logf("%-28s %-11s n=%-3d p50 %-10v p99 %-10v max %v", tool.name, kind, len(ds), ds[len(ds)/2], ds[len(ds)*99/100], ds[len(ds)-1])
		}
	}
}

// TestMeasureNewFileVisibility measures how soon a new file saved in one
// mount is read in another mount of the store on its own database handle
// (as another daemon would be): from close() returning in mount A until
// mount B reads the content. It asserts nothing. Run it with
// MEMFS_MEASURE_VISIBILITY=<samples> (and MEMFS_TEST_POSTGRES=url for
// PostgreSQL) go test -run TestMeasureNewFileVisibility -v ./fusefs/
func TestMeasureNewFileVisibility(t *testing.T) {
	samples, _ := strconv.Atoi(os.Getenv("MEMFS_MEASURE_VISIBILITY"))
	if samples <= 0 {
		t.Skip("set MEMFS_MEASURE_VISIBILITY to the number of samples")
	}
	dsn := filepath.Join(t.TempDir(), "memfs.db")
	if pgtest.Server() != "" {
		dsn = pgtest.Database(t)
	}
	open := func() *versions.DB {
		db, err := versions.Open(dsn, versions.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	e := &env{db: open(), dir: t.TempDir(), log: &logBuffer{}}
	st := e.store(t, "Visibility")
	a, dirA := e.mountStore(t, st, Options{})
	sessB, err := e.db.CreateSession(t.Context(), []versions.AttachmentParams{{StoreID: st.ID}})
	if err != nil {
		t.Fatal(err)
	}
	b := e.mountSession(t, open(), sessB, Options{})
	dirB := b.dir(0)
	_ = a
	var lat []time.Duration
	timeouts := 0
	for i := range samples {
		name := fmt.Sprintf("new-%04d.md", i)
		want := "saved " + name
		if err := os.WriteFile(filepath.Join(dirA, name), []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		closed := time.Now()
		for {
			got, err := os.ReadFile(filepath.Join(dirB, name))
			if err == nil && string(got) == want {
				lat = append(lat, time.Since(closed))
				break
			}
			if time.Since(closed) > 5*time.Second {
				timeouts++
				break
			}
			time.Sleep(200 * time.Microsecond)
		}
	}
	slices.Sort(lat)
	if len(lat) == 0 {
		t.Fatalf("no sample became visible (%d timeouts)", timeouts)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	pct := func(p int) time.Duration { return lat[min(len(lat)-1, len(lat)*p/100)].Round(10 * time.Microsecond) }
	t.Logf("new file to another mount (%s): n=%d p50 %v p90 %v p95 %v p99 %v max %v, %d timeouts; load %s", backend(dsn), len(lat),
		pct(50), pct(90), pct(95), pct(99), pct(100), timeouts, strings.TrimSpace(string(load)))
}

func backend(dsn string) string {
	if versions.IsPostgres(dsn) {
		return "PostgreSQL"
	}
	return "SQLite"
}
