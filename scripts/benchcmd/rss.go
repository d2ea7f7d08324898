package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

type rssResult struct {
	Stores           int     `json:"stores"`
	MemoriesPerStore int     `json:"memories_per_store"`
	FilesRead        int     `json:"files_read"`
	MemfsPeakMiB     float64 `json:"memfs_vmhwm_mib"`
	// MemfsAnonMiB and MemfsFileMiB split the daemon's resident set after
	// the walk: its own memory, and the pages of files it maps (its
	// binary), which vary with how the page cache holds the file (a
	// binary just built is held in large folios, mapped whole).
	MemfsAnonMiB    float64 `json:"memfs_rss_anon_mib"`
	MemfsFileMiB    float64 `json:"memfs_rss_file_mib"`
	LoopbackPeakMiB float64 `json:"loopback_vmhwm_mib"`
	Daemon          string  `json:"memfs_daemon"`
	Met             bool    `json:"met"`
}

// rssDirs spreads each store's memories over this many directories.
const rssDirs = 20

// measureRSS fills cfg.rssStores stores with cfg.rssMemories memories each,
// mounts them all in one daemon process, reads every file through the mount
// and reads the daemon's peak RSS (VmHWM). A go-fuse loopback daemon serving
// the same files from tmpfs is measured the same way, for scale.
func measureRSS(ctx context.Context, cfg *config, work string, rep *report) error {
	dbPath := filepath.Join(work, "rss.db")
	var names []string
	for i := range cfg.rssStores {
		names = append(names, fmt.Sprintf("rss store %d", i))
	}
	db, sess, err := openSession(ctx, dbPath, false, names...)
	if err != nil {
		return err
	}
	err = fillStores(ctx, db, sess, cfg.rssMemories)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	res := &rssResult{Stores: cfg.rssStores, MemoriesPerStore: cfg.rssMemories}
	mnt := filepath.Join(work, "rss-memfs")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return err
	}
	if cfg.memfsBin != "" {
		if err := evictPages(cfg.memfsBin); err != nil {
			return err
		}
	}
	d, kind, err := startMemfsDaemon(ctx, cfg, dbPath, sess.ID, mnt)
	if err != nil {
		return err
	}
	res.Daemon = kind
	mem, files, err := daemonPeak(ctx, d, mnt)
	if err != nil {
		return err
	}
	res.MemfsPeakMiB, res.MemfsAnonMiB, res.MemfsFileMiB, res.FilesRead = mem.peak, mem.anon, mem.file, files
	if want := cfg.rssStores * cfg.rssMemories; res.FilesRead != want {
		return fmt.Errorf("read %d files through the memfs mount, want %d", res.FilesRead, want)
	}

	backing := filepath.Join(work, "tmpfs", "rss-backing")
	for _, a := range sess.Resources {
		if err := writeTree(filepath.Join(backing, a.Slug), cfg.rssMemories); err != nil {
			return err
		}
	}
	lmnt := filepath.Join(work, "rss-loopback")
	if err := os.MkdirAll(lmnt, 0o755); err != nil {
		return err
	}
	ld, err := startDaemon(ctx, "--loopback", backing, "--mountpoint", lmnt)
	if err != nil {
		return err
	}
	mem, _, err = daemonPeak(ctx, ld, lmnt)
	if err != nil {
		return err
	}
	res.LoopbackPeakMiB = mem.peak
	res.Met = res.MemfsPeakMiB <= rssTargetMiB
	rep.RSS = res
	return nil
}

// evictPages drops a file's pages from the page cache. A binary the
// compiler just wrote is held in large folios, which a process maps whole:
// run so, the daemon's resident set counts more of its binary than once
// the binary was read back from disk, as an installed one is.
func evictPages(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open the binary to measure: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("drop %s from the page cache: %w", path, err)
	}
	return nil
}

func rssPath(i int) string { return fmt.Sprintf("/d%02d/m%05d.md", i%rssDirs, i) }

// fillStores writes n memories of fileSize bytes into each of sess's stores,
// one writer per store.
func fillStores(ctx context.Context, db *versions.DB, sess *versions.Session, n int) error {
	var wg sync.WaitGroup
	errs := make([]error, len(sess.Resources))
	for s, a := range sess.Resources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				if _, err := db.CreateMemory(ctx, a.StoreID, rssPath(i), string(makeContent(s, i)), versions.UserActor("bench")); err != nil {
					errs[s] = fmt.Errorf("fill store %s: %w", a.StoreID, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// writeTree writes the same layout fillStores makes into a plain directory.
func writeTree(dir string, n int) error {
	for i := range n {
		p := filepath.Join(dir, rssPath(i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, makeContent(0, i), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// resident is a daemon's memory in MiB: its peak resident set (VmHWM),
// and its anonymous and file-backed resident memory at the time.
type resident struct{ peak, anon, file float64 }

// daemonPeak reads every file below mnt, served by d, then stops d and
// returns its memory and the number of files read.
func daemonPeak(ctx context.Context, d *daemon, mnt string) (resident, int, error) {
	defer stopDaemon(d, mnt)
	files, err := walkChild(ctx, mnt)
	if err != nil {
		return resident{}, files, err
	}
	kib, err := procStatus(d.pid(), "VmHWM", "RssAnon", "RssFile")
	if err != nil {
		return resident{}, files, err
	}
	return resident{float64(kib[0]) / 1024, float64(kib[1]) / 1024, float64(kib[2]) / 1024}, files, nil
}

// walkChild reads every file below dir in a client process, as an agent
// would, and returns how many it read.
func walkChild(ctx context.Context, dir string) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("find the bench binary to re-run: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, "walk", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("walk %s: %w", dir, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return 0, fmt.Errorf("walk %s printed %q, not a count", dir, out)
	}
	return n, nil
}

// walkMain is the "walk" helper mode: read every file below a directory
// and print how many there were.
func walkMain(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: walk DIR")
	}
	files := 0
	err := filepath.WalkDir(args[0], func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// An agent reads its stores; the history tree beside them in the
		// mount root holds every version again and is not its working set.
		if e.IsDir() && e.Name() == ".history" && filepath.Dir(path) == filepath.Clean(args[0]) {
			return filepath.SkipDir
		}
		if e.Type().IsRegular() {
			if _, err := os.ReadFile(path); err != nil {
				return err
			}
			files++
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, files)
	return err
}

// procStatus reads fields of a process's /proc status given in kB.
func procStatus(pid int, fields ...string) ([]int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, fmt.Errorf("read the daemon's status: %w", err)
	}
	defer f.Close()
	kib := make([]int, len(fields))
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, v, _ := strings.Cut(sc.Text(), ":")
		if i := slices.Index(fields, name); i >= 0 {
			if kib[i], err = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB")); err != nil {
				return nil, fmt.Errorf("%s in /proc/%d/status: %w", name, pid, err)
			}
			found++
		}
	}
	if found != len(fields) {
		return nil, fmt.Errorf("/proc/%d/status lacks one of %v", pid, fields)
	}
	return kib, nil
}
