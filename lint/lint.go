// Package lint reports what makes a set of memory stores untidy: near
// duplicate memories, copies of one memory that drifted apart, lines that
// state different values for the same thing, open conflicts, memories
// near their size limit, frontmatter problems and credentials. Every
// check is deterministic; docs/lint.md explains each heuristic. Check is
// pure (it looks only at the memories it is given); Run reads the stores
// through versions.
package lint

import (
	"context"
	"fmt"
	"sort"

	"github.com/memfs/memfs/versions"
)

// Kinds of finding.
const (
	KindNearDuplicate = "near_duplicate"
	KindDiverged      = "diverged_copy"
	KindContradiction = "contradiction"
	KindConflict      = "open_conflict"
	KindSize          = "near_size_limit"
	KindFrontmatter   = "frontmatter"
	KindCredential    = "credential"
)

// Memory is one memory as lint reads it.
type Memory struct {
	StoreID   string
	StoreName string
	ID        string
	Path      string
	VersionID string
	Content   string
	// MaxBytes is its store's limit on a memory's size (0: none).
	MaxBytes int
}

// Ref names a memory and, when it is about one line, the line (from 1).
type Ref struct {
	StoreID  string `json:"memory_store_id"`
	MemoryID string `json:"memory_id,omitempty"`
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	// VersionID: the version the finding is about (credentials and
	// conflicts), else the memory's current one.
	VersionID string `json:"memory_version_id,omitempty"`
}

// Finding is one thing lint reports.
type Finding struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Ref     Ref    `json:"memory"`
	Other   *Ref   `json:"other,omitempty"`
	// Lines are the lines the finding is about: the shared lines of
	// duplicates, the lines that disagree in copies (prefixed "< " for
	// Ref's and "> " for Other's), the two statements of a
	// contradiction, the lost lines of a conflict.
	Lines []string `json:"lines,omitempty"`
}

// MarshalJSON is not needed: Finding's tags are its API shape; the type
// tag is added by the list that holds it.

// Check runs the checks that need only the memories' content, in a fixed
// order, and returns the findings sorted by kind, store and path.
func Check(ms []Memory) []Finding {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].StoreID != ms[j].StoreID {
			return ms[i].StoreID < ms[j].StoreID
		}
		return ms[i].Path < ms[j].Path
	})
	docs := make([]*doc, len(ms))
	for i := range ms {
		docs[i] = parseDoc(&ms[i], i)
	}
	var out []Finding
	related, sim := similarity(docs)
	out = append(out, sim...)
	out = append(out, contradictions(docs, related)...)
	out = append(out, sizes(docs)...)
	out = append(out, frontmatterProblems(docs)...)
	return out
}

// Run lints the stores together: the checks of Check over all their
// memories at once (so a copy in another store counts), then each store's
// open conflicts and the credentials memfs scan would report.
func Run(ctx context.Context, db *versions.DB, storeIDs []string) ([]Finding, error) {
	var ms []Memory
	for _, id := range storeIDs {
		s, err := db.GetStore(ctx, id)
		if err != nil {
			return nil, err
		}
		heads, err := db.Heads(ctx, id)
		if err != nil {
			return nil, err
		}
		for _, h := range heads {
			m := Memory{StoreID: id, StoreName: s.Name, ID: h.ID, Path: h.Path, VersionID: h.VersionID, MaxBytes: s.MaxMemoryBytes}
			if h.Content != nil {
				m.Content = *h.Content
			}
			ms = append(ms, m)
		}
	}
	out := Check(ms)
	for _, id := range storeIDs {
		cs, err := db.OpenConflicts(ctx, id)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			by := "an unknown writer"
			if c.CreatedBy != nil {
				by = c.CreatedBy.ID
			}
			out = append(out, Finding{
				Kind:    KindConflict,
				Message: fmt.Sprintf("%s saved over version %s without having read it; %d lines of the two are not in the current content: merge them, or run memfs version resolve %s %s", by, c.Overwrote, len(c.Lost), id, c.VersionID),
				Ref:     Ref{StoreID: id, MemoryID: c.MemoryID, Path: c.Path, VersionID: c.VersionID},
				Lines:   c.Lost,
			})
		}
		err = db.ScanStore(ctx, id, func(f versions.ScanFinding) error {
			where := "an old version"
			if f.Head {
				where = "the current version"
			}
			out = append(out, Finding{
				Kind:    KindCredential,
				Message: fmt.Sprintf("%s holds a credential (%s): remove it, then memfs scan %s --redact", where, f.Rule, id),
				Ref:     Ref{StoreID: id, MemoryID: f.MemoryID, Path: f.Path, Line: f.Line, VersionID: f.VersionID},
			})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
