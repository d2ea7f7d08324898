package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// The phases of the small-file workload, in the order they run.
var phaseNames = []string{"create", "stat", "list", "read", "overwrite", "atomic-save", "rename", "delete"}

// listPasses is how many times the list phase lists every directory: a
// single pass over 20 directories is too short to time.
const listPasses = 10

// settleAfterCreate is the pause between the create phase and the next:
// longer than memfs's grace period for new files.
const settleAfterCreate = time.Second

// fileSize is the size of every file the workload writes.
const fileSize = 2048

// workload is one run of the small-file workload under root, which must be
// an empty or missing directory on the target.
type workload struct {
	root  string
	files int
	dirs  int
	// content[g][i] is what generation g (create, overwrite, atomic save)
	// writes into file i: distinct every time, so that a store that skips
	// unchanged saves still has to save.
	content [3][][]byte
}

func newWorkload(root string, files, dirs int) *workload {
	w := &workload{root: root, files: files, dirs: dirs}
	for g := range w.content {
		w.content[g] = make([][]byte, files)
		for i := range files {
			w.content[g][i] = makeContent(g, i)
		}
	}
	return w
}

// makeContent is fileSize bytes of UTF-8 text naming its generation and file.
func makeContent(gen, i int) []byte {
	line := fmt.Sprintf("generation %d of file %05d: memfs benchmark text, café ünïcödé ✓\n", gen, i)
	b := bytes.Repeat([]byte(line), fileSize/len(line)+1)[:fileSize-1]
	// Cut on a rune boundary so the content stays valid UTF-8.
	for len(b) > 0 && b[len(b)-1]&0xC0 == 0x80 {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] >= 0xC0 {
		b = b[:len(b)-1]
	}
	b = append(b, bytes.Repeat([]byte{'\n'}, fileSize-len(b))...)
	return b
}

func (w *workload) dir(i int) string  { return filepath.Join(w.root, fmt.Sprintf("d%02d", i%w.dirs)) }
func (w *workload) name(i int) string { return filepath.Join(w.dir(i), fmt.Sprintf("f%05d.md", i)) }
func (w *workload) renamed(i int) string {
	return filepath.Join(w.dir(i), fmt.Sprintf("g%05d.md", i))
}

// run runs every phase and returns each one's wall time in seconds and the
// number of operations it did.
func (w *workload) run() (map[string]float64, map[string]int, error) {
	steps := map[string]func() (int, error){
		"create":      w.create,
		"stat":        w.stat,
		"list":        w.list,
		"read":        w.read,
		"overwrite":   w.overwrite,
		"atomic-save": w.atomicSave,
		"rename":      w.rename,
		"delete":      w.delete,
	}
	secs := map[string]float64{}
	ops := map[string]int{}
	if err := unix.Mkdir(w.root, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, nil, fmt.Errorf("make the workload directory %s: %w", w.root, err)
	}
	for _, p := range phaseNames {
		if p == "stat" {
			// Untimed, on every target: memfs publishes a new file in the
			// background once it has gone unchanged for its grace period
			// (0.5 s), and that work belongs to create, not to whichever
			// phase happens to run meanwhile.
			time.Sleep(settleAfterCreate)
		}
		start := time.Now()
		n, err := steps[p]()
		d := time.Since(start)
		if err != nil {
			return nil, nil, fmt.Errorf("phase %s: %w", p, err)
		}
		secs[p] = d.Seconds()
		ops[p] = n
		if p == "atomic-save" {
			// Untimed: a target that dropped a save must not look fast.
			if err := w.check(2); err != nil {
				return nil, nil, fmt.Errorf("after phase %s: %w", p, err)
			}
		}
	}
	for i := range w.dirs {
		if err := unix.Rmdir(w.dir(i)); err != nil {
			return nil, nil, fmt.Errorf("remove %s after the delete phase: %w", w.dir(i), err)
		}
	}
	return secs, ops, nil
}

func writeFile(path string, flags int, data []byte) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC|flags, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	n, err := unix.Write(fd, data)
	if err == nil && n != len(data) {
		err = fmt.Errorf("short write: %d of %d bytes", n, len(data))
	}
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func (w *workload) create() (int, error) {
	for i := range w.dirs {
		if err := unix.Mkdir(w.dir(i), 0o755); err != nil {
			return 0, fmt.Errorf("mkdir %s: %w", w.dir(i), err)
		}
	}
	for i := range w.files {
		if err := writeFile(w.name(i), unix.O_CREAT|unix.O_EXCL, w.content[0][i]); err != nil {
			return i, err
		}
	}
	return w.files, nil
}

func (w *workload) stat() (int, error) {
	var st unix.Stat_t
	for i := range w.files {
		if err := unix.Stat(w.name(i), &st); err != nil {
			return i, fmt.Errorf("stat %s: %w", w.name(i), err)
		}
		if st.Size != fileSize {
			return i, fmt.Errorf("stat %s: size %d, want %d", w.name(i), st.Size, fileSize)
		}
	}
	return w.files, nil
}

func (w *workload) list() (int, error) {
	buf := make([]byte, 64<<10)
	seen := 0
	for range listPasses {
		seen = 0
		for d := range w.dirs {
			n, err := countEntries(filepath.Dir(w.name(d)), buf)
			if err != nil {
				return 0, err
			}
			seen += n
		}
	}
	if seen != w.files {
		return 0, fmt.Errorf("listed %d files in %d directories, want %d", seen, w.dirs, w.files)
	}
	return listPasses * w.dirs, nil
}

// countEntries lists dir with getdents and counts what is not . or ..
func countEntries(dir string, buf []byte) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer unix.Close(fd)
	count := 0
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return 0, fmt.Errorf("list %s: %w", dir, err)
		}
		if n == 0 {
			return count, nil
		}
		_, c, _ := unix.ParseDirent(buf[:n], -1, nil)
		count += c
	}
}

func (w *workload) read() (int, error) { return w.files, w.check(0) }

// check reads every file and compares it with what generation gen wrote.
func (w *workload) check(gen int) error {
	buf := make([]byte, 2*fileSize)
	for i := range w.files {
		got, err := readFile(w.name(i), buf)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, w.content[gen][i]) {
			return fmt.Errorf("read %s: got %d bytes that differ from the %d written", w.name(i), len(got), fileSize)
		}
	}
	return nil
}

// readFile reads path into buf (which must be larger than the file) and
// returns the bytes read.
func readFile(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	got := 0
	for got < len(buf) {
		n, err := unix.Read(fd, buf[got:])
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if n == 0 {
			break
		}
		got += n
	}
	return buf[:got], nil
}

func (w *workload) overwrite() (int, error) {
	for i := range w.files {
		if err := writeFile(w.name(i), unix.O_TRUNC, w.content[1][i]); err != nil {
			return i, err
		}
	}
	return w.files, nil
}

// atomicSave is what editors, sed -i and Python's write-then-replace do.
func (w *workload) atomicSave() (int, error) {
	for i := range w.files {
		tmp := filepath.Join(w.dir(i), fmt.Sprintf(".f%05d.md.tmp", i))
		if err := writeFile(tmp, unix.O_CREAT|unix.O_EXCL, w.content[2][i]); err != nil {
			return i, err
		}
		if err := unix.Rename(tmp, w.name(i)); err != nil {
			return i, fmt.Errorf("rename %s over %s: %w", tmp, w.name(i), err)
		}
	}
	return w.files, nil
}

func (w *workload) rename() (int, error) {
	for i := range w.files {
		if err := unix.Rename(w.name(i), w.renamed(i)); err != nil {
			return i, fmt.Errorf("rename %s: %w", w.name(i), err)
		}
	}
	return w.files, nil
}

func (w *workload) delete() (int, error) {
	for i := range w.files {
		if err := unix.Unlink(w.renamed(i)); err != nil {
			return i, fmt.Errorf("delete %s: %w", w.renamed(i), err)
		}
	}
	return w.files, nil
}
