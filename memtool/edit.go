package memtool

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/memfs/memfs/versions"
)

func (t *Tool) create(ctx context.Context, c Command) Result {
	sp, bad := storePath(c.Path)
	if bad != nil {
		return *bad
	}
	if c.FileText == nil {
		return fail("create needs `file_text`, the content of the new file (it may be empty)")
	}
	if r := t.writable(ctx, "create", c.Path); r != nil {
		return *r
	}
	if sp == "/" {
		return fail("File %s already exists", shown(c.Path))
	}
	if _, err := t.db.Stat(ctx, t.storeID, sp); err == nil {
		return fail("File %s already exists", shown(c.Path))
	}
	_, err := t.db.Save(ctx, versions.SaveReq{StoreID: t.storeID, Path: sp, Content: *c.FileText, By: t.actor, Exclusive: true})
	if err != nil {
		var e *versions.Error
		if asEngine(err, &e) && e.Code == versions.CodePathConflict && (e.ConflictingPath == sp || e.ConflictingMemoryID == "") {
			return fail("File %s already exists", shown(c.Path))
		}
		return engineFailure("create", c.Path, err)
	}
	return ok("File created successfully at: %s", c.Path)
}

// edit lets change compute the new content of the file at the tool path
// (or refuse) and saves it as one version, reading and writing in one
// engine transaction, so that an edit never overwrites a save it did not see.
func (t *Tool) edit(ctx context.Context, verb, path string, missing func() Result, change func(content string) (string, *Result)) (string, Result) {
	sp, bad := storePath(path)
	if bad != nil {
		return "", *bad
	}
	if r := t.writable(ctx, verb, path); r != nil {
		return "", *r
	}
	if sp == "/" {
		return "", notAFile(path)
	}
	m, err := t.db.EditMemory(ctx, t.storeID, sp, func(content string) (string, error) {
		next, refused := change(content)
		if refused != nil {
			return "", refusal{*refused}
		}
		return next, nil
	}, t.actor)
	var ref refusal
	switch {
	case errors.As(err, &ref):
		return "", ref.Result
	case versions.ErrorCode(err) == versions.CodeNotFound:
		if e, serr := t.db.Stat(ctx, t.storeID, sp); serr == nil && e.Dir {
			return "", notAFile(path)
		}
		return "", missing()
	case err != nil:
		return "", engineFailure(verb, path, err)
	}
	return *m.Content, Result{}
}

// notAFile is the SDK's answer to an edit of a directory.
func notAFile(path string) Result { return fail("The path %s is not a file.", shown(path)) }

// refusal carries the result of an edit that change refused out of the
// engine's transaction.
type refusal struct{ Result }

func (r refusal) Error() string { return r.Content }

func (t *Tool) strReplace(ctx context.Context, c Command) Result {
	if c.OldStr == nil {
		return fail("str_replace needs `old_str`, the exact text to replace")
	}
	if *c.OldStr == "" {
		return fail("No replacement was performed: old_str is empty; give the exact text to replace")
	}
	old, repl := *c.OldStr, ""
	if c.NewStr != nil {
		repl = *c.NewStr
	}
	missing := func() Result {
		return fail("The path %s does not exist. Please provide a valid path.", shown(c.Path))
	}
	changedLine := 0
	next, r := t.edit(ctx, "edit", c.Path, missing, func(content string) (string, *Result) {
		lines := occurrenceLines(content, old)
		switch {
		case len(lines) == 0:
			r := fail("No replacement was performed, old_str `%s` did not appear verbatim in %s.", old, shown(c.Path))
			return "", &r
		case strings.Count(content, old) > 1:
			r := fail("No replacement was performed. Multiple occurrences of old_str `%s` in lines: %s. Please ensure it is unique", old, joinInts(lines))
			return "", &r
		}
		changedLine = lines[0] - 1
		return strings.Replace(content, old, repl, 1), nil
	})
	if r.IsError {
		return r
	}
	newLines := strings.Split(next, "\n")
	from, to := max(0, changedLine-2), min(len(newLines), changedLine+3)
	var b strings.Builder
	b.WriteString("The memory file has been edited. Here is the snippet showing the change (with line numbers):")
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "\n%6d\t%s", i+1, newLines[i])
	}
	return Result{Content: b.String()}
}

// occurrenceLines returns the distinct line numbers (from 1) where old
// starts in content, overlapping occurrences included.
func occurrenceLines(content, old string) []int {
	var out []int
	line, scanned := 1, 0
	for from := 0; ; {
		i := strings.Index(content[from:], old)
		if i < 0 {
			return out
		}
		pos := from + i
		line += strings.Count(content[scanned:pos], "\n")
		scanned = pos
		if len(out) == 0 || out[len(out)-1] != line {
			out = append(out, line)
		}
		from = pos + 1
	}
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

func (t *Tool) insert(ctx context.Context, c Command) Result {
	if c.InsertLine == nil {
		return fail("insert needs `insert_line`, the line to insert after (0 for the top of the file)")
	}
	if c.InsertText == nil {
		return fail("insert needs `insert_text`, the text to insert")
	}
	at, text := *c.InsertLine, strings.TrimSuffix(*c.InsertText, "\n")
	missing := func() Result { return fail("The path %s does not exist. Please provide a valid path.", shown(c.Path)) }
	_, r := t.edit(ctx, "edit", c.Path, missing, func(content string) (string, *Result) {
		lines := strings.Split(content, "\n")
		if at < 0 || at > len(lines) {
			r := fail("Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", at, len(lines))
			return "", &r
		}
		out := make([]string, 0, len(lines)+1)
		out = append(append(append(out, lines[:at]...), text), lines[at:]...)
		return strings.Join(out, "\n"), nil
	})
	if r.IsError {
		return r
	}
	return ok("The file %s has been edited.", c.Path)
}

func (t *Tool) delete(ctx context.Context, c Command) Result {
	sp, bad := storePath(c.Path)
	if bad != nil {
		return *bad
	}
	if sp == "/" {
		return fail("Cannot delete the /memories directory itself")
	}
	if r := t.writable(ctx, "delete", c.Path); r != nil {
		return *r
	}
	_, err := t.db.DeleteTree(ctx, t.storeID, sp, t.actor)
	if versions.ErrorCode(err) == versions.CodeNotFound {
		return fail("The path %s does not exist", shown(c.Path))
	}
	if err != nil {
		return engineFailure("delete", c.Path, err)
	}
	return ok("Successfully deleted %s", c.Path)
}

func (t *Tool) rename(ctx context.Context, c Command) Result {
	from, bad := storePath(c.OldPath)
	if bad != nil {
		return *bad
	}
	to, bad := storePath(c.NewPath)
	if bad != nil {
		return *bad
	}
	if from == "/" {
		return fail("Cannot rename the /memories directory itself")
	}
	if r := t.writable(ctx, "rename", c.OldPath); r != nil {
		return *r
	}
	if r := t.writable(ctx, "rename", c.NewPath); r != nil {
		return *r // into the write prefix from outside it, or out of it
	}
	if _, err := t.db.Stat(ctx, t.storeID, to); to == "/" || err == nil {
		return fail("The destination %s already exists", shown(c.NewPath))
	}
	err := t.db.MoveTree(ctx, t.storeID, from, to, t.actor)
	var e *versions.Error
	switch {
	case err == nil:
		return ok("Successfully renamed %s to %s", c.OldPath, c.NewPath)
	case versions.ErrorCode(err) == versions.CodeNotFound:
		return fail("The path %s does not exist", shown(c.OldPath))
	case versions.ErrorCode(err) == versions.CodeInvalid && strings.HasPrefix(to, from+"/"):
		return fail("Cannot rename %s to %s: a directory cannot move into itself", shown(c.OldPath), shown(c.NewPath))
	case asEngine(err, &e) && e.Code == versions.CodePathConflict && e.ConflictingPath == to:
		return fail("The destination %s already exists", shown(c.NewPath))
	}
	return engineFailure("rename", c.OldPath, err)
}
