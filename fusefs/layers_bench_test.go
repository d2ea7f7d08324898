package fusefs

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

// BenchmarkSaveLayers is where one save's time goes, by layer, for each
// kind of save the small-file benchmark times (scripts/bench). Each op
// runs on a go-fuse loopback over tmpfs and on a memfs mount of a SQLite
// file, one after the other in this process:
//
//   - the loopback's µs/op is the FUSE round trips and the kernel's work:
//     what any FUSE file system pays for the same system calls;
//   - on memfs, engine-µs/op is the time inside the engine's write calls
//     (versions.DB.WriteTimes), of which tx-µs/op is BEGIN to the end of
//     COMMIT on the connection and commit-µs/op is the COMMIT alone; what
//     lies between the call and the transaction is the engine's Go and its
//     hand-off to the writer;
//   - cpu-µs/op is the process's CPU time per op: the client's, the
//     kernel's and the daemon's, steadier than the wall time on a busy
//     machine;
//   - open-µs, write-µs, close-µs, rename-µs and unlink-µs are the median
//     time of each system call of the op: which of them waits for what
//     (a save's close, an atomic save's rename, for the engine's call);
//   - memfs's µs/op minus the loopback's and the engine's is the mirror,
//     fusefs and go-fuse's node layer (approximately: the loopback also
//     makes its system calls on tmpfs, which memfs does not).
//
// go test -run XXX -bench SaveLayers -benchtime 2000x ./fusefs/
//
// With -args -layers.cpuprofile DIR, each op's timed loop (and only it)
// is CPU-profiled into DIR/op-target.prof, which splits memfs's time
// further by the frames it runs in (docs/performance.md).
func BenchmarkSaveLayers(b *testing.B) {
	content := make([]byte, 2048)
	for i := range content {
		content[i] = 'a' + byte(i%26)
	}
	for _, op := range []string{"create", "overwrite", "atomic-save", "rename", "delete"} {
		b.Run(op+"/loopback", func(b *testing.B) {
			dir := mountBenchLoopback(b)
			runLayerOp(b, op, "loopback", dir, content, func() {})
		})
		b.Run(op+"/memfs", func(b *testing.B) {
			db, dir := mountBenchMemfs(b)
			var t0 versions.WriteTimes
			var w0, s0 int64
			runLayerOp(b, op, "memfs", dir, content, func() { t0, w0, s0 = db.WriteTimes(), db.Writes(), db.Statements() })
			t1, n := db.WriteTimes(), float64(b.N)
			us := func(d time.Duration) float64 { return float64(d.Microseconds()) / n }
			b.ReportMetric(us(t1.Call-t0.Call), "engine-µs/op")
			b.ReportMetric(us(t1.Transaction-t0.Transaction), "tx-µs/op")
			b.ReportMetric(us(t1.Commit-t0.Commit), "commit-µs/op")
			b.ReportMetric(float64(db.Writes()-w0)/n, "commits/op")
			b.ReportMetric(float64(db.Statements()-s0)/n, "stmts/op")
		})
	}
}

var layersProfile = flag.String("layers.cpuprofile", "", "BenchmarkSaveLayers: profile each op's timed loop into this directory")

// runLayerOp prepares b.N files in dir as op needs them, calls start, and
// times b.N ops of the workload's shape.
func runLayerOp(b *testing.B, op, target, dir string, content []byte, start func()) {
	name := func(i int) string { return filepath.Join(dir, fmt.Sprintf("f%06d.md", i)) }
	if op != "create" {
		// The saves timed write other content than these: a save of the
		// content a memory holds already writes nothing.
		first := append([]byte("first "), content...)
		for i := range b.N {
			if err := os.WriteFile(name(i), first, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Each system call's time in the timed loop, reported as its median:
	// a save's close holds the engine's call, an atomic save's rename too.
	var calls map[string][]time.Duration
	timed := func(call string, f func() error) {
		t0 := time.Now()
		err := f()
		if calls != nil {
			calls[call] = append(calls[call], time.Since(t0))
		}
		if err != nil {
			b.Fatal(call, ": ", err)
		}
	}
	write := func(path string, flags int) {
		var fd int
		timed("open", func() (err error) { fd, err = unix.Open(path, flags|unix.O_CLOEXEC, 0o644); return err })
		timed("write", func() error { _, err := unix.Write(fd, content); return err })
		timed("close", func() error { return unix.Close(fd) })
	}
	start()
	if *layersProfile != "" {
		f, err := os.Create(filepath.Join(*layersProfile, op+"-"+target+".prof"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	cpu0 := processCPU(b)
	calls = map[string][]time.Duration{}
	b.ResetTimer()
	for i := range b.N {
		switch op {
		case "create":
			write(name(i), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL)
		case "overwrite":
			write(name(i), unix.O_WRONLY|unix.O_TRUNC)
		case "atomic-save":
			tmp := name(i) + ".tmp"
			write(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL)
			timed("rename", func() error { return unix.Rename(tmp, name(i)) })
		case "rename":
			timed("rename", func() error { return unix.Rename(name(i), name(i)+".renamed") })
		case "delete":
			timed("unlink", func() error { return unix.Unlink(name(i)) })
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	for call, ds := range calls {
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds())/1e3, call+"-µs")
	}
}

// processCPU is the CPU time this process used so far, in user and
// kernel mode: the client's system calls, the kernel's FUSE work and the
// daemon's, since the mount is served in this process.
func processCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mountBenchLoopback serves a go-fuse loopback of a tmpfs directory with
// the mount options scripts/bench gives it, unmounted at the end.
func mountBenchLoopback(b *testing.B) string {
	backing, err := os.MkdirTemp("/dev/shm", "memfs-layers-")
	if err != nil {
		b.Skip("no tmpfs at /dev/shm:", err)
	}
	b.Cleanup(func() { os.RemoveAll(backing) })
	root, err := fs.NewLoopbackRoot(backing)
	if err != nil {
		b.Fatal(err)
	}
	t := time.Second
	mnt := b.TempDir()
	srv, err := fs.Mount(mnt, root, &fs.Options{EntryTimeout: &t, AttrTimeout: &t, NegativeTimeout: &t,
		MountOptions: fuse.MountOptions{DirectMount: true, DisableReadDirPlus: true, MaxBackground: 64,
			Options: []string{"nosuid", "nodev", "default_permissions"}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Unmount() })
	return mnt
}

// mountBenchMemfs mounts a fresh store of a fresh SQLite file, unmounted at
// the end.
func mountBenchMemfs(b *testing.B) (*versions.DB, string) {
	ctx := context.Background()
	tmp := b.TempDir()
	db, err := versions.Open(filepath.Join(tmp, "memfs.db"), versions.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	st, err := db.CreateStore(ctx, versions.StoreParams{Name: "Layers", MaxMemories: 100000, MaxHistoryBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: st.ID, Access: versions.ReadWrite}})
	if err != nil {
		b.Fatal(err)
	}
	mnt := filepath.Join(tmp, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		b.Fatal(err)
	}
	srv, err := Mount(mnt, db, sess, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Unmount() })
	return db, filepath.Join(mnt, sess.Resources[0].Slug)
}
