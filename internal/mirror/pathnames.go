package mirror

import "path"

// pathNames maps each path the mirror has a file at to that file, and each
// directory to the files it holds by name, so that a temporary file's
// siblings are read from its directory alone.
type pathNames struct {
	at    map[string]ID
	inDir map[string]map[string]ID
}

func newPathNames() pathNames {
	return pathNames{at: map[string]ID{}, inDir: map[string]map[string]ID{}}
}

// set gives file id the name p.
func (n *pathNames) set(p string, id ID) {
	if p == "" {
		return
	}
	n.at[p] = id
	dir, base := path.Dir(p), path.Base(p)
	d := n.inDir[dir]
	if d == nil {
		d = map[string]ID{}
		n.inDir[dir] = d
	}
	d[base] = id
}

// remove takes p from file id, if it still pathNames that file.
func (n *pathNames) remove(p string, id ID) {
	if p == "" || n.at[p] != id {
		return
	}
	delete(n.at, p)
	dir := path.Dir(p)
	delete(n.inDir[dir], path.Base(p))
	if len(n.inDir[dir]) == 0 {
		delete(n.inDir, dir)
	}
}
