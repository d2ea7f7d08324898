package memtool

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/memfs/memfs/versions"
)

const (
	// maxLines is the longest file view shows at all.
	maxLines = 999999
	// maxViewChars is how many characters of a file one view shows; Claude's
	// tool description tells it that longer files are cut and that it can
	// page through them with view_range.
	maxViewChars = 16000
	// dirSize is what a directory is listed with: memfs directories hold no
	// bytes of their own, and this is the size a local file system's
	// directory block shows (the seeds' example listing has it too).
	dirSize = "4.0K"
)

func (t *Tool) view(ctx context.Context, c Command) Result {
	sp, bad := storePath(c.Path)
	if bad != nil {
		return *bad
	}
	e, err := t.db.Stat(ctx, t.storeID, sp)
	if versions.ErrorCode(err) == versions.CodeNotFound {
		if _, serr := t.db.GetStore(ctx, t.storeID); serr != nil {
			return engineFailure("view", c.Path, serr)
		}
		return fail("The path %s does not exist. Please provide a valid path.", shown(c.Path))
	}
	if err != nil {
		return engineFailure("view", c.Path, err)
	}
	if e.Dir {
		return t.viewDir(ctx, c.Path, sp)
	}
	m, err := t.db.GetMemory(ctx, t.storeID, sp)
	if versions.ErrorCode(err) == versions.CodeNotFound {
		return fail("The path %s does not exist. Please provide a valid path.", shown(c.Path))
	}
	if err != nil {
		return engineFailure("view", c.Path, err)
	}
	return viewFile(c.Path, *m.Content, c.ViewRange)
}

// viewDir lists two levels below dir, skipping hidden names and
// node_modules; directories end in "/".
func (t *Tool) viewDir(ctx context.Context, shownPath, dir string) Result {
	var lines []string
	var walk func(dir, rel string, depth int) error
	walk = func(dir, rel string, depth int) error {
		entries, err := t.db.ReadDir(ctx, t.storeID, dir)
		if err != nil {
			return err
		}
		sortUTF16(entries)
		for _, e := range entries {
			if strings.HasPrefix(e.Name, ".") || e.Name == "node_modules" {
				continue
			}
			itemRel := e.Name
			if rel != "" {
				itemRel = rel + "/" + e.Name
			}
			if !e.Dir {
				lines = append(lines, humanSize(int64(e.Memory.ContentSize))+"\t"+shownPath+"/"+itemRel)
				continue
			}
			lines = append(lines, dirSize+"\t"+shownPath+"/"+itemRel+"/")
			if depth < 2 {
				if err := walk(e.Path, itemRel, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(dir, "", 1); err != nil {
		return engineFailure("view", shownPath, err)
	}
	head := fmt.Sprintf("Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n%s\t%s",
		shownPath, dirSize, shownPath)
	if len(lines) == 0 {
		return ok("%s", head)
	}
	return ok("%s\n%s", head, strings.Join(lines, "\n"))
}

// sortUTF16 orders names as JavaScript's default sort does (by UTF-16 code
// units), the order of the reference handler's listing.
func sortUTF16(entries []versions.Entry) {
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := utf16.Encode([]rune(entries[i].Name)), utf16.Encode([]rune(entries[j].Name))
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return len(a) < len(b)
	})
}

// viewFile numbers the lines of content (or of view_range's part of it)
// right-aligned to six columns and a tab, and cuts the view at maxViewChars
// characters with a note saying how to see the rest.
func viewFile(path, content string, vr []int) Result {
	lines := strings.Split(content, "\n")
	if len(lines) > maxLines {
		return fail("File %s exceeds maximum line limit of 999,999 lines.", shown(path))
	}
	start, end := 0, len(lines)
	if len(vr) == 2 {
		start = max(1, vr[0]) - 1
		end = vr[1]
		if end == -1 {
			end = len(lines)
		}
		start, end = jsSlice(len(lines), start, end)
	}
	shownLines := lines[start:end]
	note := ""
	if chars := utf8.RuneCountInString(strings.Join(shownLines, "\n")); chars > maxViewChars {
		shownLines, note = cut(shownLines, start, len(lines), chars, utf8.RuneCountInString(content))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here's the content of %s with line numbers:\n", shown(path))
	for i, l := range shownLines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%6d\t%s", start+i+1, l)
	}
	b.WriteString(note)
	return Result{Content: b.String()}
}

// jsSlice clamps [start, end) as JavaScript's Array.prototype.slice does
// (a negative end counts from the end), so that any view_range Claude sends
// shows what the reference handler shows.
func jsSlice(n, start, end int) (int, int) {
	if end < 0 {
		end = max(n+end, 0)
	}
	start, end = min(start, n), min(end, n)
	if end < start {
		end = start
	}
	return start, end
}

// cut keeps the whole lines that fit in maxViewChars characters (at least
// the first, shortened if it alone is longer) and words the note.
func cut(lines []string, start, total, chars, fileChars int) ([]string, string) {
	kept, used := 0, 0
	for kept < len(lines) {
		n := utf8.RuneCountInString(lines[kept])
		if kept > 0 {
			n++ // the newline before it
		}
		if used+n > maxViewChars {
			break
		}
		used += n
		kept++
	}
	first, last := start+1, start+kept
	if kept == 0 {
		r := []rune(lines[0])
		short := string(r[:maxViewChars])
		return []string{short}, fmt.Sprintf("\n\nNote: this file has %d characters and view shows at most %d at a time: line %d was cut after %d of its %d characters. The rest of the file starts at line %d: view it with view_range [%d, -1].",
			fileChars, maxViewChars, first, maxViewChars, len(r), first+1, first+1)
	}
	return lines[:kept], fmt.Sprintf("\n\nNote: this file has %d characters and view shows at most %d at a time: lines %d-%d of %d are shown. View the rest with view_range [%d, -1], or a smaller range.",
		fileChars, maxViewChars, first, last, total, last+1)
}

// humanSize writes a size as the reference handler does: whole units bare
// ("2K"), others with one decimal rounded half up ("1.5K"), bytes as "512B".
func humanSize(n int64) string {
	if n == 0 {
		return "0B"
	}
	units := []string{"B", "K", "M", "G"}
	i, div := 0, int64(1)
	for i < len(units)-1 && n >= div*1024 {
		i, div = i+1, div*1024
	}
	if n%div == 0 {
		return fmt.Sprintf("%d%s", n/div, units[i])
	}
	tenths := n * 10 / div
	if 2*(n*10%div) >= div {
		tenths++
	}
	return fmt.Sprintf("%d.%d%s", tenths/10, tenths%10, units[i])
}
