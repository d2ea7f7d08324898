package fusefs

import (
	"maps"
	"path"
	"strings"
	"sync"
)

// DefaultScratchPatterns are the names of editors' swap, lock, probe and
// backup files (path.Match patterns on the file's name). Such files are
// never stored: they live in the daemon's memory while the mount runs, may
// hold any bytes (vim's swap is binary), are seen only through this mount,
// and count against its unsaved-data budget.
var DefaultScratchPatterns = []string{
	".*.sw?",       // vim and nano swap and lock files: .notes.md.swp, .swo, .swx
	"*~",           // vim's writebackup and emacs's backups: notes.md~
	"#*#",          // emacs auto-save: #notes.md#
	".#*",          // emacs lock: .#notes.md
	"4913",         // vim's probe whether the directory keeps a new file's owner
	"5036", "5159", // …its next names when 4913 exists
}

// namePatterns tells scratch and temporary files by name.
type namePatterns []string

func (s namePatterns) match(name string) bool {
	for _, p := range s {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// scratchFiles are a store mount's scratch files by path: the files created
// with a scratch name and the held backups (a stored file renamed to one).
// Their buffer is their only copy and the store knows nothing of them, so
// the mount keeps them here until they are removed, renamed to a real name
// or the mount goes away: the kernel may forget a node at any time (memory
// pressure, drop_caches), go-fuse then drops it from its tree, and Lookup
// and Readdir find it here instead. Its lock is a leaf.
type scratchFiles struct {
	mu sync.Mutex
	// byDir is keyed by directory path, then name.
	byDir map[string]map[string]*fileNode
	at    map[*fileNode]string
	// cap counts them against the mount's cap (scratchcap.go).
	cap *scratchCap
}

func newScratchFiles(c *scratchCap) *scratchFiles {
	return &scratchFiles{byDir: map[string]map[string]*fileNode{}, at: map[*fileNode]string{}, cap: c}
}

// put records f at p, in place of what was there, and off its old path.
func (s *scratchFiles) put(p string, f *fileNode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(f)
	dir, name := path.Split(p)
	dir = cleanDir(dir)
	if old := s.byDir[dir][name]; old != nil {
		delete(s.at, old)
		s.cap.files.Add(-1)
	}
	s.cap.files.Add(1)
	if s.byDir[dir] == nil {
		s.byDir[dir] = map[string]*fileNode{}
	}
	s.byDir[dir][name] = f
	s.at[f] = p
}

// drop forgets f: removed, replaced, or no longer a scratch file.
func (s *scratchFiles) drop(f *fileNode) {
	s.mu.Lock()
	s.dropLocked(f)
	s.mu.Unlock()
}

func (s *scratchFiles) dropLocked(f *fileNode) {
	p, ok := s.at[f]
	if !ok {
		return
	}
	delete(s.at, f)
	s.cap.files.Add(-1)
	dir, name := path.Split(p)
	dir = cleanDir(dir)
	if s.byDir[dir][name] == f {
		delete(s.byDir[dir], name)
		if len(s.byDir[dir]) == 0 {
			delete(s.byDir, dir)
		}
	}
}

// get is the scratch file at p, or nil.
func (s *scratchFiles) get(p string) *fileNode {
	dir, name := path.Split(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byDir[cleanDir(dir)][name]
}

// list is the scratch files in directory dir by name.
func (s *scratchFiles) list(dir string) map[string]*fileNode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.byDir[dir])
}

// under reports a scratch file anywhere below directory dir: the
// directory is not empty.
func (s *scratchFiles) under(dir string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for d := range s.byDir {
		if d == dir || strings.HasPrefix(d, dir+"/") {
			return true
		}
	}
	return false
}

// movedDir follows a directory renamed from one path to another.
func (s *scratchFiles) movedDir(from, to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	moved := map[string]map[string]*fileNode{}
	for d, files := range s.byDir {
		if d == from || strings.HasPrefix(d, from+"/") {
			moved[to+strings.TrimPrefix(d, from)] = files
			delete(s.byDir, d)
		}
	}
	for d, files := range moved {
		s.byDir[d] = files
		for name, f := range files {
			s.at[f] = childPath(d, name)
		}
	}
}

// cleanDir is the directory part of path.Split as a store path: "/" or
// "/a/b" without its trailing slash.
func cleanDir(dir string) string {
	if len(dir) > 1 {
		return dir[:len(dir)-1]
	}
	return "/"
}
