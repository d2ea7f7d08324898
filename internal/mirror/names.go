package mirror

import "path"

// DefaultTempPatterns are the names atomic savers give the file they
// write before renaming it over the target (path.Match patterns on the
// file's name, as each tool makes them). A file with such a name is
// temporary until it is renamed, removed or outlives the grace; every
// other new file is final at close().
var DefaultTempPatterns = []string{
	"sed??????",   // GNU sed -i: sedAbC123
	"XX??????",    // perl -pi (5.28 and later): XXAbC123
	"tmp????????", // Python's tempfile.mkstemp and NamedTemporaryFile: tmpab_12cd3
	".tmp-*",      // the SDK memory tools: .tmp-<pid>-<uuid>
	"*.tmp",       // cp notes.md notes.md.tmp && mv notes.md.tmp notes.md
	"*.new",       // …the same with .new
	"*.lock",      // git-style locks renamed over their file: index.lock
}

// DefaultScratchPatterns are the names of editors' swap, lock, probe and
// backup files. Such files are never stored: they live in the daemon's
// memory while the mount runs, may hold any bytes (vim's swap is binary),
// are seen only through this mount, and count against its unsaved-data
// budget.
var DefaultScratchPatterns = []string{
	".*.sw?",       // vim and nano swap and lock files: .notes.md.swp, .swo, .swx
	"*~",           // vim's writebackup and emacs's backups: notes.md~
	"#*#",          // emacs auto-save: #notes.md#
	".#*",          // emacs lock: .#notes.md
	"4913",         // vim's probe whether the directory keeps a new file's owner
	"5036", "5159", // …its next names when 4913 exists
}

// Names matches a file's name against path.Match patterns.
func Names(patterns []string) func(name string) bool {
	return func(name string) bool {
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}
}
