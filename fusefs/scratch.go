package fusefs

import "path"

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

// scratchNames tells scratch files by name.
type scratchNames []string

func (s scratchNames) match(name string) bool {
	for _, p := range s {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
