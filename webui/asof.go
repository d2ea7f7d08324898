package webui

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/memfs/memfs/versions"
)

// whenOf is the moment a tree page shows: at (a session id, a checkpoint's
// name or a time, as `memfs` takes them), else the checkpoint picked, else
// the time picked (a datetime-local field, read as UTC). "" is now.
func whenOf(q url.Values) string {
	if at := strings.TrimSpace(q.Get("at")); at != "" {
		return at
	}
	if cp := q.Get("checkpoint"); cp != "" {
		return cp
	}
	t := strings.TrimSpace(q.Get("time"))
	if t != "" && !strings.HasSuffix(t, "Z") && !strings.ContainsAny(t[min(len(t), 10):], "+-") {
		t += "Z"
	}
	return t
}

// asOfTree lists dir of the store as of a moment: the files whose parent
// is dir, and the folders their paths imply.
func (u *UI) asOfTree(r *http.Request, st *versions.Store, dir, when string) (*versions.AsOf, []treeLine, error) {
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	}
	a, files, err := u.db.StoreAsOf(r.Context(), st.ID, when, versions.SnapshotOptions{PathPrefix: prefix})
	if err != nil {
		return nil, nil, err
	}
	var lines []treeLine
	seen := map[string]bool{}
	for _, f := range files {
		rest := strings.TrimPrefix(f.Memory.Path, prefix)
		name, _, isDir := strings.Cut(rest, "/")
		if isDir {
			if !seen[name] {
				seen[name] = true
				lines = append(lines, treeLine{Name: name, Path: joinPath(dir, name), Dir: true})
			}
			continue
		}
		m := f.Memory
		lines = append(lines, treeLine{Name: name, Path: m.Path, Memory: &m, Writer: f.Writer, Redacted: f.Redacted})
	}
	return a, lines, nil
}
