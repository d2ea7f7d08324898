package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// place is where a directory lies whatever path reaches it: its file
// system's device and its path from that file system's root. Two paths
// name the same directory, through a bind mount or not, when their places
// are equal.
type place struct {
	dev  uint64
	path string
}

// placeOf locates path, absolute and with symlinks resolved, through the
// mount that holds it: the topmost of those mounted on its longest prefix.
func placeOf(mounts []*mountinfo.Info, path string) (place, bool) {
	var best *mountinfo.Info
	for _, m := range mounts {
		if under(path, m.Mountpoint) && (best == nil || len(m.Mountpoint) >= len(best.Mountpoint)) {
			best = m
		}
	}
	if best == nil {
		return place{}, false
	}
	rel := strings.TrimPrefix(path, best.Mountpoint)
	return place{unix.Mkdev(uint32(best.Major), uint32(best.Minor)), filepath.Join(best.Root, rel)}, true
}

// checkRWDisjoint refuses a --rw grant through which the command could
// reach a hidden directory (the database's) or one of its parents by
// another path than its own: a bind mount of the directory or of a parent,
// at the grant or anywhere below it. Comparing paths alone misses those;
// comparing places does not. A read-only mount below a grant stays
// read-only to the command and is not counted.
func checkRWDisjoint(s *Spec) error {
	if len(s.RW) == 0 || len(s.Hide) == 0 {
		return nil
	}
	mounts, err := mountinfo.GetMounts(nil)
	if err != nil {
		return errorf(KindSetup, "read the mount table: %v", err)
	}
	var hidden []place
	for _, h := range s.Hide {
		if _, err := os.Stat(h); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if p, ok := placeOf(mounts, h); ok {
			hidden = append(hidden, p)
		}
	}
	for _, d := range s.RW {
		var reach []place
		if p, ok := placeOf(mounts, d); ok {
			reach = append(reach, p)
		}
		for _, m := range mounts {
			if m.Mountpoint != d && within(m.Mountpoint, d) && !slices.Contains(strings.Split(m.Options, ","), "ro") {
				reach = append(reach, place{unix.Mkdev(uint32(m.Major), uint32(m.Minor)), m.Root})
			}
		}
		for _, r := range reach {
			for _, h := range hidden {
				if r.dev == h.dev && (under(h.path, r.path) || under(r.path, h.path)) {
					return errorf(KindInvalid, "--rw %s reaches the database's directory (%s on its file system) through a bind mount: the command could replace the database; grant a directory that does not hold it", d, h.path)
				}
			}
		}
	}
	return nil
}

// under is within, with / holding every path.
func under(path, dir string) bool {
	return filepath.Clean(dir) == "/" || within(path, dir)
}
