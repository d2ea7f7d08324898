package fusefs

import (
	"testing"

	"github.com/hanwen/go-fuse/v2/posixtest"
)

// posixSubset is the part of go-fuse's conformance suite that applies to a
// store: no symlinks, hard links, locks, xattrs of one's own, fallocate, or
// FileLarge (128 KiB of binary: over the size limit and not UTF-8).
var posixSubset = []string{
	"FileBasic", "AppendWrite", "TruncateFile", "TruncateNoFile",
	"MkdirRmdir", "ReadDirBasic", "ReadDirConsistency", "DirSeek",
	"FstatDeleted", "NlinkZero", "ParallelFileOpen", "FdLeak", "OpenAt",
	"RenameOverwriteDestExist", "RenameOverwriteDestNoExist", "RenameOpenDir",
}

func TestPosix(t *testing.T) {
	for _, name := range posixSubset {
		t.Run(name, func(t *testing.T) {
			fn, ok := posixtest.All[name]
			if !ok {
				t.Fatalf("posixtest.All has no test %q", name)
			}
			e := newEnv(t)
			st := e.store(t, "posix")
			_, dir := e.mountStore(t, st, Options{})
			fn(t, dir)
		})
	}
}
