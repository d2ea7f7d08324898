package versions

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/memfs/memfs/guard"
)

// GuardPolicy is a store's credential guard: guard.Refuse (the default),
// guard.Warn or guard.Off.
type GuardPolicy = guard.Policy

const GuardOff = guard.Off

// GuardEvent is a credential the guard found in a write: refused (the
// write failed) or, on a store whose guard warns, kept. It names the rule
// and the line, never the secret.
type GuardEvent struct {
	StoreID string
	Path    string
	guard.Finding
	Refused bool
}

// SetGuardObserver makes fn see every credential the guard finds in a
// write through db: refusals as they happen, warnings once their write has
// committed. A daemon logs and counts them; nil stops it.
func (db *DB) SetGuardObserver(fn func(GuardEvent)) {
	if fn == nil {
		db.guardObserver.Store(nil)
		return
	}
	db.guardObserver.Store(&fn)
}

// NoteGuardRefusal tells the observer of a refusal made before any commit:
// a mount refuses at write() what the commit at close() would refuse.
func (db *DB) NoteGuardRefusal(e GuardEvent) { db.observeGuard(e) }

func (db *DB) observeGuard(e GuardEvent) {
	if fn := db.guardObserver.Load(); fn != nil {
		(*fn)(e)
	}
}

// guardCheck applies the store's guard to a write of content at path,
// whose previous content is base ("" for a new file): only what the write
// adds is checked, so the cost follows the change, not the file. On refuse
// the write fails CodeCredential; on warn it is kept and its findings are
// reported once it commits.
func guardCheck(r *run, s *storeRow, path, base, content string) error {
	if err := guardName(r, s, path); err != nil {
		return err
	}
	if s.Guard == guard.Off || content == "" {
		return nil
	}
	found := guard.ScanChange(base, content)
	if len(found) == 0 {
		return nil
	}
	refused := s.Guard != guard.Warn
	for _, f := range found {
		e := GuardEvent{StoreID: s.ID, Path: path, Finding: f, Refused: refused}
		if refused {
			r.db.observeGuard(e)
		} else {
			r.guardWarnings = append(r.guardWarnings, e)
		}
	}
	if !refused {
		return nil
	}
	var what []string
	for i, f := range found {
		if i == 3 {
			what = append(what, fmt.Sprintf("and %d more", len(found)-i))
			break
		}
		what = append(what, f.String())
	}
	return errorf(CodeCredential, "credential found in %s (memory store %s): %s; nothing was saved: remove the credential and save again (memory outlives the session and every version is kept), or set the store's guard to warn or off (`memfs store update %s --guard warn`)",
		path, s.ID, strings.Join(what, ", "), s.ID)
}

// guardName applies the store's guard to a name a write gives a memory or
// a directory (a create, a rename, a mkdir): a credential in a name would
// stay in history's paths, the mount's xattrs and logs, where redaction
// cannot reach it. The refusal and the warning name the directory, not
// the name that holds the credential.
func guardName(r *run, s *storeRow, path string) error {
	if s.Guard == guard.Off {
		return nil
	}
	found := guard.ScanName(path)
	if len(found) == 0 {
		return nil
	}
	shown := guard.NameShown(path)
	refused := s.Guard != guard.Warn
	var rules []string
	for _, f := range found {
		e := GuardEvent{StoreID: s.ID, Path: shown, Finding: f, Refused: refused}
		if refused {
			r.db.observeGuard(e)
		} else {
			r.guardWarnings = append(r.guardWarnings, e)
		}
		rules = append(rules, f.Rule)
	}
	if !refused {
		return nil
	}
	return errorf(CodeCredential, "credential found in a name under %s (memory store %s): rule %s; nothing was saved: a name is kept in history, where redaction cannot reach it, so choose a name without the credential",
		shown, s.ID, strings.Join(rules, ", "))
}

// pendingContent is the content a mount's save of path starts from: the
// pending file's (id, when it has one) or the memory's at path.
func pendingContent(r *run, s *storeRow, id int64, path string) (string, error) {
	if id != 0 {
		var c []byte
		err := r.scan("SELECT content FROM pending WHERE id = ? AND store = ?", []any{id, s.seq}, &c)
		if err == nil {
			return string(c), nil
		}
		if err != sql.ErrNoRows {
			return "", err
		}
	}
	m, err := memoryAt(r, s.seq, s.ID, path)
	if err != nil || m == nil {
		return "", err
	}
	return headContent(r, m.Seq)
}

// ScanFinding is a credential that a version of a store holds.
type ScanFinding struct {
	VersionID string `json:"version_id"`
	MemoryID  string `json:"memory_id"`
	Path      string `json:"path"`
	// Head: the version is the current content of its memory, which
	// cannot be redacted until the memory is updated or deleted.
	Head bool `json:"head"`
	guard.Finding
}

// ScanStore checks every version of the store that still holds content
// (heads and history alike) against the guard's rules, whatever the
// store's policy, oldest first, and calls fn for each finding.
func (db *DB) ScanStore(ctx context.Context, storeID string, fn func(ScanFinding) error) error {
	return db.read(ctx, "scan store", func(r *run) error {
		s, err := loadStoreLite(r, storeID, false)
		if err != nil {
			return err
		}
		lo, hi := s.versionRange()
		rows, err := r.query(`SELECT v.seq, v.id, v.created_at, v.memory_id, v.path, `+contentOf("v")+`,
			`+isHead("v")+`
			FROM versions v WHERE v.seq > ? AND v.seq < ? AND (v.content IS NOT NULL OR v.content_of IS NOT NULL) ORDER BY v.seq`, lo, hi)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f ScanFinding
			var seq, created int64
			var id, path, content sql.NullString
			if err := rows.Scan(&seq, &id, &created, &f.MemoryID, &path, &content, &f.Head); err != nil {
				return err
			}
			f.VersionID = id.String
			if !id.Valid {
				f.VersionID = versionID(seq, created)
			}
			f.Path = path.String
			for _, g := range guard.Scan(content.String) {
				f.Finding = g
				if err := fn(f); err != nil {
					return err
				}
			}
		}
		return rows.Err()
	})
}
