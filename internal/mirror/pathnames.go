package mirror

// pathNames maps each path the mirror has a file at to that file.
type pathNames map[string]ID

// set gives file id the name p.
func (n pathNames) set(p string, id ID) {
	if p != "" {
		n[p] = id
	}
}

// remove takes p from file id, if it still names that file.
func (n pathNames) remove(p string, id ID) {
	if p != "" && n[p] == id {
		delete(n, p)
	}
}
