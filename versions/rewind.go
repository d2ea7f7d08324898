package versions

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/memfs/memfs/guard"
)

// Rewinding a store (restore as of a moment, undo of a session) is one
// plan: for each memory it touches, the state it should be in (a path and
// the version whose content it takes, or absent), and the change that gets
// it there. Applying the plan writes one version per memory it changes,
// attributed to the caller, in one transaction that first takes a safety
// checkpoint; a memory whose wanted content was redacted is skipped and
// said so, as is one a path conflict blocks. Nothing is rewritten in
// place: every change is a new version, as a restore of one version is.
//
// Changes apply in this order: deletions, then changes of live memories,
// then memories brought back; a change whose path another memory still
// holds waits for a later pass, and is skipped once no pass frees it (two
// memories that swapped paths).

// Action is what a plan does to one memory.
type Action string

const (
	ActModify   Action = "modify"   // a live memory takes its old content and/or path
	ActRecreate Action = "recreate" // a deleted memory comes back (a new memory: new id)
	ActDelete   Action = "delete"   // a live memory is deleted
	ActSkip     Action = "skip"     // left as it is (Reason says why)
)

// PlannedChange is one memory of a plan.
type PlannedChange struct {
	Action Action `json:"action"`
	// MemoryID is the memory the change is about: the live one, or for a
	// recreation the one that was deleted.
	MemoryID string `json:"memory_id"`
	// Path is where the memory ends (a deletion: where it was).
	Path string `json:"path"`
	// FromPath is where a memory that moves is now.
	FromPath string `json:"from_path,omitempty"`
	// VersionID is the version whose content the memory takes.
	VersionID string `json:"source_version_id,omitempty"`
	// Reason says why a change was skipped.
	Reason string `json:"reason,omitempty"`
	// Written is the version the change wrote, once applied; NewMemoryID
	// the id of a recreated memory.
	Written     string `json:"written_version_id,omitempty"`
	NewMemoryID string `json:"new_memory_id,omitempty"`

	live    *Memory
	fromSeq int64
	sha     string
	size    int
}

// Plan is what a rewind changes (or, once applied, changed).
type Plan struct {
	StoreID string
	// AsOf is the moment a restore brings the store back to; nil for an
	// undo.
	AsOf *AsOf
	// SessionID is the session an undo reverts.
	SessionID string
	Changes   []PlannedChange
	// Applied: the changes were written (not a dry run, and something to
	// change). Safety is the checkpoint taken before.
	Applied bool
	Safety  *Checkpoint
}

// Count returns how many changes have action a.
func (p *Plan) Count(a Action) int {
	n := 0
	for _, c := range p.Changes {
		if c.Action == a {
			n++
		}
	}
	return n
}

// Writes is the number of changes that write a version.
func (p *Plan) Writes() int { return len(p.Changes) - p.Count(ActSkip) }

func (p Plan) MarshalJSON() ([]byte, error) {
	changes := p.Changes
	if changes == nil {
		changes = []PlannedChange{}
	}
	return json.Marshal(struct {
		Type      string          `json:"type"`
		StoreID   string          `json:"memory_store_id"`
		AsOf      *AsOf           `json:"as_of,omitempty"`
		SessionID string          `json:"session_id,omitempty"`
		Applied   bool            `json:"applied"`
		Safety    *Checkpoint     `json:"safety_checkpoint"`
		Modified  int             `json:"modified"`
		Recreated int             `json:"recreated"`
		Deleted   int             `json:"deleted"`
		Skipped   int             `json:"skipped"`
		Changes   []PlannedChange `json:"changes"`
	}{"memory_store_rewind", p.StoreID, p.AsOf, p.SessionID, p.Applied, p.Safety,
		p.Count(ActModify), p.Count(ActRecreate), p.Count(ActDelete), p.Count(ActSkip), changes})
}

// wanted is the state a memory should be brought to: present at path with
// the content of the version at row seq, or absent.
type wanted struct {
	memoryID string
	present  bool
	path     string
	seq      int64
	id       string // the version at seq
	sha      string
	size     int
	redacted bool
}

// planChange compares a memory's live row (nil: none) with what is wanted
// and returns the change, or false when there is nothing to do.
func planChange(live *Memory, w wanted) (PlannedChange, bool) {
	c := PlannedChange{MemoryID: w.memoryID, Path: w.path, VersionID: w.id, live: live, fromSeq: w.seq, sha: w.sha, size: w.size}
	switch {
	case !w.present && live == nil:
		return c, false
	case !w.present:
		c.Action, c.Path, c.VersionID = ActDelete, live.Path, ""
		return c, true
	case live != nil && live.Path == w.path && live.ContentSHA256 == w.sha && !w.redacted:
		return c, false
	case w.redacted:
		c.Action = ActSkip
		c.Reason = fmt.Sprintf("version %s, which held its content then, was redacted: its content is gone and is not brought back", w.id)
		if live != nil {
			c.FromPath = live.Path
		}
		return c, true
	case live != nil:
		c.Action = ActModify
		if live.Path != w.path {
			c.FromPath = live.Path
		}
		return c, true
	default:
		c.Action = ActRecreate
		return c, true
	}
}

// liveMemories reads the store's live memories by id.
func liveMemories(r *run, s *storeRow) (map[string]*Memory, error) {
	rows, err := r.query("SELECT "+memCols+" FROM memories m WHERE m.store = ?", s.seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*Memory{}
	for rows.Next() {
		m, err := scanMemoryRow(rows, s.ID, false)
		if err != nil {
			return nil, err
		}
		out[m.ID] = m
	}
	return out, rows.Err()
}

// applyPlan writes p's changes (see above) after a safety checkpoint
// named for what is done. restored marks each written version as
// restored from the version it took its content from.
func applyPlan(r *run, s *storeRow, p *Plan, safetyName, note string, by Actor) error {
	if p.Writes() == 0 {
		return nil
	}
	cp, err := insertCheckpoint(r, s, CheckpointOptions{Name: safetyName, Kind: CheckpointSafety, Note: note}, by)
	if err != nil {
		return err
	}
	p.Safety = cp
	order := func(a Action) int {
		switch a {
		case ActDelete:
			return 0
		case ActModify:
			return 1
		case ActRecreate:
			return 2
		}
		return 3
	}
	var todo []int
	for phase := 0; phase < 3; phase++ {
		for i := range p.Changes {
			if order(p.Changes[i].Action) == phase {
				todo = append(todo, i)
			}
		}
	}
	for len(todo) > 0 {
		var blocked []int
		for _, i := range todo {
			c := &p.Changes[i]
			done, err := applyChange(r, s, c, by)
			if err != nil {
				return err
			}
			if !done {
				blocked = append(blocked, i)
			}
		}
		if len(blocked) == len(todo) {
			for _, i := range blocked {
				c := &p.Changes[i]
				c.Action, c.Reason = ActSkip, fmt.Sprintf("%v (another memory holds the path, or the two swapped paths)", checkFree(r, s, c.Path, c.MemoryID))
			}
			break
		}
		todo = blocked
	}
	return nil
}

// applyChange writes one change, or returns false when its path is still
// taken by another memory.
func applyChange(r *run, s *storeRow, c *PlannedChange, by Actor) (bool, error) {
	switch c.Action {
	case ActDelete:
		seq, err := deleteMemory(r, s, c.live, false, by)
		if err == nil {
			c.Written, err = writtenID(r, seq)
		}
		return true, err
	case ActModify, ActRecreate:
		// A memory that stays at its path holds it already.
		if c.live == nil || c.live.Path != c.Path {
			except := ""
			if c.live != nil {
				except = c.live.ID
			}
			if err := checkFree(r, s, c.Path, except); err != nil {
				if ErrorCode(err) == CodePathConflict {
					return false, nil
				}
				return false, err
			}
		}
		content, err := headContent(r, c.fromSeq)
		if err != nil {
			return false, err
		}
		var m *Memory
		if c.live != nil {
			u := MemoryUpdate{Path: &c.Path, pathFree: true}
			if c.sha != c.live.ContentSHA256 {
				u.from, u.fromSize = c.fromSeq, c.size
				if s.Guard != guard.Off {
					base, err := headContent(r, c.live.Seq)
					if err != nil {
						return false, err
					}
					if err := guardCheck(r, s, c.Path, base, content); err != nil {
						return skipGuard(c, err)
					}
				}
			}
			m, err = applyUpdate(r, s, c.live, u, c.sha, by)
		} else {
			if err := checkContent(content, s.MaxMemoryBytes); err != nil {
				c.Action, c.Reason = ActSkip, err.Error()
				return true, nil
			}
			if err := guardCheck(r, s, c.Path, "", content); err != nil {
				return skipGuard(c, err)
			}
			m, err = insertMemory(r, s, c.Path, content, by)
			if m != nil {
				c.NewMemoryID = m.ID
			}
		}
		if err != nil {
			return false, err
		}
		c.Written = m.VersionID
		return true, markRestored(r, m.Seq, c.VersionID)
	}
	return true, nil
}

func skipGuard(c *PlannedChange, err error) (bool, error) {
	if ErrorCode(err) != CodeCredential {
		return false, err
	}
	c.Action, c.Reason = ActSkip, err.Error()
	return true, nil
}

// writtenID is the id of the version at row seq.
func writtenID(r *run, seq int64) (string, error) {
	var id sql.NullString
	var created int64
	if err := r.scan("SELECT id, created_at FROM versions WHERE seq = ?", []any{seq}, &id, &created); err != nil {
		return "", err
	}
	if id.Valid {
		return id.String, nil
	}
	return versionID(seq, created), nil
}

// safetyName names the safety checkpoint of a rewind taken at t.
func safetyName(what string, t time.Time) string { return defaultCheckpointName("before-"+what, t) }

// RestoreAsOf brings the store back to how it was at when (see asof.go):
// each memory that changed since takes its content and path of then, one
// deleted since comes back (as a new memory), and one created since is
// deleted, after a safety checkpoint. With dryRun it only plans. A second
// run with the same when changes nothing. Errors: those of ResolveAsOf,
// CodeReadOnly (archived), and those of the writes (a full store).
func (db *DB) RestoreAsOf(ctx context.Context, storeID, when string, dryRun bool, by Actor) (*Plan, error) {
	var out *Plan
	err := db.write(ctx, "restore a store as of a moment", func(r *run) error {
		s, err := loadStore(r, storeID)
		if err != nil {
			return err
		}
		if s.ArchivedAt != nil {
			return archivedError(s)
		}
		a, err := resolveAsOf(r, s, when)
		if err != nil {
			return err
		}
		out = &Plan{StoreID: s.ID, AsOf: a}
		then, err := snapshot(r, s.seq, s.ID, a.Pos)
		if err != nil {
			return err
		}
		live, err := liveMemories(r, s)
		if err != nil {
			return err
		}
		desc, err := descendants(r, s, live)
		if err != nil {
			return err
		}
		for _, f := range then {
			w := wanted{memoryID: f.Memory.ID, present: true, path: f.Memory.Path, seq: f.seq, id: f.Memory.VersionID,
				sha: f.Memory.ContentSHA256, size: f.Memory.ContentSize, redacted: f.Redacted}
			m := live[f.Memory.ID]
			if m == nil {
				m = desc[f.Memory.ID]
			}
			if m != nil {
				delete(live, m.ID)
			}
			if c, ok := planChange(m, w); ok {
				out.Changes = append(out.Changes, c)
			}
		}
		for _, m := range live {
			c, _ := planChange(m, wanted{memoryID: m.ID})
			out.Changes = append(out.Changes, c)
		}
		sortChanges(out.Changes)
		if dryRun {
			return nil
		}
		if err := applyPlan(r, s, out, safetyName("restore", db.now()), "taken by a restore as of "+when, by); err != nil {
			return err
		}
		out.Applied = out.Writes() > 0
		return nil
	})
	return out, err
}

// sortChanges orders a plan by path, as people read it.
func sortChanges(cs []PlannedChange) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Path < cs[j].Path })
}

// descendants maps each memory that is not live but that a restore brought
// back (as a new memory, whose first version says which version it was
// restored from) to the live memory it came back as, following restores
// of restores, so that rewinding twice finds the memory it brought back
// rather than bringing it back again.
func descendants(r *run, s *storeRow, live map[string]*Memory) (map[string]*Memory, error) {
	lo, hi := s.versionRange()
	rows, err := r.query("SELECT memory_id, restored_from FROM versions WHERE seq > ? AND seq < ? AND operation = 'created' AND restored_from IS NOT NULL", lo, hi)
	if err != nil {
		return nil, err
	}
	from := map[string]string{} // memory → the version it was restored from
	for rows.Next() {
		var mem, v string
		if err := rows.Scan(&mem, &v); err != nil {
			rows.Close()
			return nil, err
		}
		from[mem] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	parent := make(map[string]string, len(from))
	for mem, v := range from {
		seq, err := findVersion(r, v, lo, hi)
		if err != nil {
			return nil, err
		}
		if seq == 0 {
			continue // pruned
		}
		var p string
		if err := r.scan("SELECT memory_id FROM versions WHERE seq = ?", []any{seq}, &p); err != nil {
			return nil, err
		}
		if p != mem {
			parent[mem] = p
		}
	}
	out := map[string]*Memory{}
	for id, m := range live {
		cur := id
		for range len(parent) {
			p, ok := parent[cur]
			if !ok || live[p] != nil {
				break
			}
			if out[p] == nil {
				out[p] = m
			}
			cur = p
		}
	}
	return out, nil
}
