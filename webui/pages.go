package webui

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/memfs/memfs/versions"
)

// storeLine is a row of the stores page.
type storeLine struct {
	versions.Store
	LastAt *time.Time
	LastBy *versions.Actor
}

func (u *UI) storesPage(w http.ResponseWriter, r *http.Request, me *who) error {
	o := versions.StoreListOptions{IncludeArchived: true, Limit: versions.MaxPageSize}
	if !me.key.AllStores() {
		o.OnlyKey = me.key.ID
	}
	var lines []storeLine
	for {
		page, err := u.db.ListStores(r.Context(), o)
		if err != nil {
			return err
		}
		for _, s := range page.Data {
			full, err := u.db.GetStore(r.Context(), s.ID)
			if err != nil {
				return err
			}
			line := storeLine{Store: *full}
			last, err := u.db.ListVersions(r.Context(), s.ID, versions.VersionListOptions{Limit: 1})
			if err != nil {
				return err
			}
			if len(last.Data) > 0 {
				line.LastAt, line.LastBy = &last.Data[0].CreatedAt, last.Data[0].CreatedBy
			}
			lines = append(lines, line)
		}
		if page.NextPage == nil {
			break
		}
		o.Page = *page.NextPage
	}
	u.render(w, r, me, http.StatusOK, "stores", "Stores", map[string]any{"Stores": lines})
	return nil
}

// treeLine is a row of a store's tree: a folder, a file, or a path that
// held a file once and holds nothing now.
type treeLine struct {
	Name, Path string
	Dir, Gone  bool
	Redacted   bool // as of a moment: its version was redacted since
	Memory     *versions.Memory
	Writer     *versions.Actor
}

// crumb is one link of a path's trail.
type crumb struct{ Name, Dir string }

func crumbs(dir string) []crumb {
	out := []crumb{{"/", "/"}}
	if dir == "/" {
		return out
	}
	parts := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	for i, p := range parts {
		out = append(out, crumb{p, "/" + strings.Join(parts[:i+1], "/")})
	}
	return out
}

func (u *UI) treePage(w http.ResponseWriter, r *http.Request, me *who) error {
	st, err := u.storeOf(r, me)
	if err != nil {
		return err
	}
	dir := r.URL.Query().Get("dir")
	if dir == "" {
		dir = "/"
	}
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "/"
	}
	ctx := r.Context()
	checkpoints, err := u.db.ListCheckpoints(ctx, st.ID)
	if err != nil {
		return err
	}
	if when := whenOf(r.URL.Query()); when != "" {
		a, lines, err := u.asOfTree(r, st, dir, when)
		if err != nil {
			return err
		}
		slices.SortStableFunc(lines, func(a, b treeLine) int { return strings.Compare(a.Name, b.Name) })
		u.render(w, r, me, http.StatusOK, "tree", st.Name, map[string]any{
			"Store": st, "Dir": dir, "Crumbs": crumbs(dir), "Lines": lines, "AsOf": a, "Checkpoints": checkpoints,
		})
		return nil
	}
	entries, err := u.db.ReadDir(ctx, st.ID, dir)
	if err != nil && versions.ErrorCode(err) != versions.CodeNotFound {
		return err
	}
	gone := err != nil
	past, herr := u.db.HistoryChildren(ctx, st.ID, dir)
	if herr != nil {
		return herr
	}
	if gone && len(past.Names) == 0 {
		return err
	}
	writers, err := u.liveWriters(ctx, st.ID, dir, entries)
	if err != nil {
		return err
	}
	var lines []treeLine
	live := map[string]bool{}
	for _, e := range entries {
		live[e.Name] = true
		l := treeLine{Name: e.Name, Path: e.Path, Dir: e.Dir, Memory: e.Memory}
		if e.Memory != nil {
			l.Writer = writers[e.Path]
		}
		lines = append(lines, l)
	}
	for _, name := range past.Names {
		if !live[name] {
			lines = append(lines, treeLine{Name: name, Path: joinPath(dir, name), Gone: true})
		}
	}
	slices.SortStableFunc(lines, func(a, b treeLine) int { return strings.Compare(a.Name, b.Name) })
	u.renderLive(w, r, me, http.StatusOK, "tree", st.Name, eventsURL(st.ID), map[string]any{
		"Store": st, "Dir": dir, "Crumbs": crumbs(dir), "Lines": lines, "Gone": gone, "Checkpoints": checkpoints,
	})
	return nil
}

// liveWriters are the writers of the head versions of the files among
// entries, by path: the store as of now below dir, read in one query
// rather than a version at a time.
func (u *UI) liveWriters(ctx context.Context, storeID, dir string, entries []versions.Entry) (map[string]*versions.Actor, error) {
	out := map[string]*versions.Actor{}
	files := false
	for _, e := range entries {
		files = files || e.Memory != nil
	}
	if !files {
		return out, nil
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	_, snap, err := u.db.StoreAsOf(ctx, storeID, time.Now().UTC().Format(time.RFC3339Nano), versions.SnapshotOptions{PathPrefix: prefix})
	if err != nil {
		return nil, err
	}
	for _, f := range snap {
		out[f.Memory.Path] = f.Writer
	}
	return out, nil
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

func eventsURL(storeID string) string { return pagePath("stores", storeID, "events") }

// historyLine is a row of a file's history.
type historyLine struct {
	versions.Version
	// PrevPath is the path this version moved its memory from, if it is a
	// rename.
	PrevPath string
	Head     bool
}

const historyPageSize = 50

func (u *UI) historyPage(w http.ResponseWriter, r *http.Request, me *who) error {
	st, err := u.storeOf(r, me)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	path := q.Get("path")
	if err := versions.ValidatePath(path); err != nil {
		return err
	}
	ctx := r.Context()
	page, err := u.db.PathHistory(ctx, st.ID, path, versions.PathHistoryOptions{Limit: historyPageSize, Page: q.Get("page")})
	if err != nil {
		return err
	}
	var head *versions.Memory
	if m, err := u.db.GetMemory(ctx, st.ID, path); err == nil {
		head = m
	} else if versions.ErrorCode(err) != versions.CodeNotFound && versions.ErrorCode(err) != versions.CodeInvalid {
		return err
	}
	lines := make([]historyLine, 0, len(page.Data))
	for _, v := range page.Data {
		// A rename's version carries the path it moved from: the line
		// links to that path's history, as `memfs log` names it, so that
		// a memory's story can be followed across its renames.
		l := historyLine{Version: v, Head: head != nil && head.VersionID == v.ID}
		if v.Path != nil && v.PreviousPath != "" && v.PreviousPath != *v.Path {
			l.PrevPath = v.PreviousPath
		}
		lines = append(lines, l)
	}
	next := ""
	if page.NextPage != nil {
		next = *page.NextPage
	}
	u.renderLive(w, r, me, http.StatusOK, "history", path, eventsURL(st.ID), map[string]any{
		"Store": st, "Path": path, "Dir": parentDir(path), "Crumbs": crumbs(path), "Lines": lines, "Head": head,
		"Next": next, "First": q.Get("page") == "",
	})
	return nil
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func (u *UI) versionPage(w http.ResponseWriter, r *http.Request, me *who) error {
	st, err := u.storeOf(r, me)
	if err != nil {
		return err
	}
	ctx := r.Context()
	v, err := u.db.GetVersion(ctx, st.ID, r.PathValue("version"))
	if err != nil {
		return err
	}
	head, err := u.headOf(r, st.ID, v.MemoryID)
	if err != nil {
		return err
	}
	prev, err := u.db.PreviousVersion(ctx, st.ID, v.ID)
	if err != nil {
		return err
	}
	path := versionPath(v, prev)
	data := map[string]any{
		"Store": st, "V": v, "Path": path, "Prev": prev, "Head": head,
		"IsHead":  head != nil && head.VersionID == v.ID,
		"Content": guardedText(st, v),
	}
	u.render(w, r, me, http.StatusOK, "version", path, data)
	return nil
}

// headOf is the live memory memoryID, or nil once it was deleted.
func (u *UI) headOf(r *http.Request, storeID, memoryID string) (*versions.Memory, error) {
	m, err := u.db.GetMemory(r.Context(), storeID, memoryID)
	if versions.ErrorCode(err) == versions.CodeNotFound {
		return nil, nil
	}
	return m, err
}

// versionPath is where a version was saved: its own path, or for a
// redacted one the path of the version before it.
func versionPath(v, prev *versions.Version) string {
	switch {
	case v.Path != nil:
		return *v.Path
	case prev != nil && prev.Path != nil:
		return *prev.Path
	}
	return ""
}
