package fusefs

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

// requestLog counts the FUSE requests a mount's debug log shows, by
// opcode, except those the kernel sends when it likes (it forgets inodes,
// interrupts requests).
type requestLog struct {
	mu sync.Mutex
	n  map[string]int
}

var requestLine = regexp.MustCompile(`rx \d+: ([A-Z_]+) `)

func (l *requestLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range requestLine.FindAllSubmatch(p, -1) {
		switch op := string(m[1]); op {
		case "FORGET", "BATCH_FORGET", "INTERRUPT":
		default:
			l.n[op]++
		}
	}
	return len(p), nil
}

// take returns the counts so far and starts again from none.
func (l *requestLog) take() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.n
	l.n = map[string]int{}
	return n
}

// Saves over a file the kernel knows, one after another, cost the daemon
// four requests each: OPEN, WRITE, FLUSH and RELEASE. In particular the
// kernel asks for no security.capability (GETXATTR) before the truncating
// open and the write, as it does unless told that the daemon clears
// privileges itself (memfs files have none to clear). After the kernel
// refreshes the file's attributes (a stat after a save), the next save
// asks both again.
func TestOverwriteRequests(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Requests")
	reqs := &requestLog{n: map[string]int{}}
	log := slog.New(slog.NewTextHandler(io.MultiWriter(reqs, e.log), nil))
	_, dir := e.mountStore(t, st, Options{Debug: true, Logger: log})
	f := filepath.Join(dir, "a.md")
	for _, c := range []string{"first", "second"} {
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The kernel sends RELEASE after close(2) has returned.
	released := func() {
		t.Helper()
		if err := eventually(5*time.Second, func() error {
			reqs.mu.Lock()
			defer reqs.mu.Unlock()
			if opened, closed := reqs.n["OPEN"]+reqs.n["CREATE"], reqs.n["RELEASE"]; closed != opened {
				return fmt.Errorf("%d of %d handles released", closed, opened)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	released()
	reqs.take()
	const saves = 5
	for i := range saves {
		if err := os.WriteFile(f, []byte(fmt.Sprintf("save %d", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	released()
	got := reqs.take()
	want := map[string]int{"OPEN": saves, "WRITE": saves, "FLUSH": saves, "RELEASE": saves}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%d saves over a known file asked %v, want %v", saves, got, want)
	}
	if m := e.memory(t, st.ID, "/a.md"); *m.Content != fmt.Sprintf("save %d", saves-1) {
		t.Fatalf("the memory holds %q", *m.Content)
	}
}
