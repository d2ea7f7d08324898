package webui

import (
	"net/http"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/versions"
)

// guarded is a version's content as a page may show it. Content the
// history views withhold (versions.WithheldFromHistory: the guard finds a
// credential in it and nobody redacted it yet) is not shown: the page
// names the rule and the line instead, as `memfs scan` does.
type guarded struct {
	Text     string
	Missing  bool // a deletion or a redaction: no content
	Findings []guard.Finding
}

func guardedText(st *versions.Store, v *versions.Version) guarded {
	if v == nil || v.Content == nil {
		return guarded{Missing: true}
	}
	if versions.WithheldFromHistory(st.Guard, v) {
		return guarded{Findings: guard.Scan(*v.Content)}
	}
	return guarded{Text: *v.Content}
}

// diffPage compares two versions, or a version and its memory's head:
// from and to are version ids, to may be "head"; without from, to is
// compared with the version before it.
func (u *UI) diffPage(w http.ResponseWriter, r *http.Request, me *who) error {
	st, err := u.storeOf(r, me)
	if err != nil {
		return err
	}
	ctx := r.Context()
	q := r.URL.Query()
	fromID, toID := q.Get("from"), q.Get("to")
	if toID == "" {
		return refusal(http.StatusBadRequest, "say which versions to compare: to=VERSION (and from=VERSION, or to=head)")
	}
	var from, to *versions.Version
	if fromID != "" {
		if from, err = u.db.GetVersion(ctx, st.ID, fromID); err != nil {
			return err
		}
	}
	if toID == "head" {
		if from == nil {
			return refusal(http.StatusBadRequest, "to=head needs from=VERSION: the version to compare with its memory's head")
		}
		head, err := u.headOf(r, st.ID, from.MemoryID)
		if err != nil {
			return err
		}
		if head == nil {
			return refusal(http.StatusNotFound, "the memory of "+from.ID+" was deleted and has no head: compare it with another version")
		}
		toID = head.VersionID
	}
	if to, err = u.db.GetVersion(ctx, st.ID, toID); err != nil {
		return err
	}
	if from == nil {
		if from, err = u.db.PreviousVersion(ctx, st.ID, to.ID); err != nil {
			return err
		}
	}
	a, b := guardedText(st, from), guardedText(st, to)
	split := q.Get("view") == "split"
	data := map[string]any{"Store": st, "From": from, "To": to, "A": a, "B": b, "Split": split, "Path": versionPath(to, from)}
	if len(a.Findings) == 0 && len(b.Findings) == 0 {
		rows := diffRows(a.Text, b.Text)
		if split {
			rows = sideBySide(rows)
		}
		data["Rows"] = rows
	}
	u.render(w, r, me, http.StatusOK, "diff", "Diff", data)
	return nil
}
