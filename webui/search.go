package webui

import (
	"net/http"
	"strings"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/versions"
)

// searchLine is one result of a store's search as the page shows it: its
// matching lines, unless the guard finds a credential in them.
type searchLine struct {
	versions.SearchResult
	Findings []guard.Finding
}

const searchLimit = 50

// searchPage runs the engine's search over one store: its current
// memories, or with history=1 every version that still holds content.
func (u *UI) searchPage(w http.ResponseWriter, r *http.Request, me *who) error {
	st, err := u.storeOf(r, me)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	query := strings.TrimSpace(q.Get("q"))
	history := q.Get("history") != ""
	var lines []searchLine
	if query != "" {
		res, err := u.db.Search(r.Context(), []string{st.ID}, query, versions.SearchOptions{History: history, Limit: searchLimit})
		if err != nil {
			return err
		}
		for _, sr := range res {
			l := searchLine{SearchResult: sr}
			if st.Guard != versions.GuardOff {
				var text []string
				for _, ln := range sr.Lines {
					text = append(text, ln.Text)
				}
				if f := guard.Scan(strings.Join(text, "\n")); len(f) > 0 {
					l.Findings, l.Lines = f, nil
				}
			}
			lines = append(lines, l)
		}
	}
	u.render(w, r, me, http.StatusOK, "search", "Search "+st.Name, map[string]any{
		"Store": st, "Q": query, "History": history, "Results": lines, "Searched": query != "", "Limit": searchLimit,
	})
	return nil
}
