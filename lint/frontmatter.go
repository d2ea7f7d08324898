package lint

import (
	"fmt"
	"path"
	"strings"
)

// frontmatter is the --- block at the top of a memory, read as the simple
// YAML memory files use: key: value lines, and aliases as [a, b] or as a
// list of "- a" lines.
type frontmatter struct {
	lines       int // lines it takes, both --- included
	name        string
	description string
	hasName     bool
	hasDesc     bool
	aliases     []string
	closed      bool
}

// splitFrontmatter reads the frontmatter off the top of lines and returns
// it with the lines after it; nil when the memory does not start with ---.
func splitFrontmatter(lines []string) (*frontmatter, []string) {
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return nil, lines
	}
	fm := &frontmatter{}
	key := ""
	for i := 1; i < len(lines); i++ {
		t := strings.TrimRight(lines[i], " \r")
		if strings.TrimSpace(t) == "---" {
			fm.lines, fm.closed = i+1, true
			return fm, lines[i+1:]
		}
		if item, ok := strings.CutPrefix(strings.TrimSpace(t), "- "); ok && key == "aliases" {
			fm.aliases = append(fm.aliases, unquote(item))
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok || strings.HasPrefix(t, " ") {
			continue
		}
		key, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch key {
		case "name":
			fm.name, fm.hasName = unquote(v), v != ""
		case "description":
			fm.description, fm.hasDesc = unquote(v), v != ""
		case "aliases":
			if strings.HasPrefix(v, "[") {
				for _, a := range strings.Split(strings.Trim(v, "[]"), ",") {
					if a = unquote(strings.TrimSpace(a)); a != "" {
						fm.aliases = append(fm.aliases, a)
					}
				}
			} else if v != "" {
				fm.aliases = append(fm.aliases, unquote(v))
			}
		}
	}
	// Never closed: not frontmatter after all, but worth a finding.
	fm.lines = 0
	return fm, lines
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// frontmatterProblems checks the stores that use the frontmatter
// convention (at least one of their memories has a name or description
// in frontmatter): each Markdown memory of such a store needs a closed
// frontmatter with both fields, and a name that is its file's name (as
// folded words: user_prefs.md matches "User prefs").
func frontmatterProblems(docs []*doc) []Finding {
	uses := map[string]bool{}
	for _, d := range docs {
		if d.fm != nil && (d.fm.hasName || d.fm.hasDesc) {
			uses[d.m.StoreID] = true
		}
	}
	var out []Finding
	for _, d := range docs {
		if !uses[d.m.StoreID] || !strings.HasSuffix(strings.ToLower(d.m.Path), ".md") {
			continue
		}
		add := func(format string, a ...any) {
			out = append(out, Finding{Kind: KindFrontmatter, Message: fmt.Sprintf(format, a...), Ref: ref(d, 1)})
		}
		switch {
		case d.fm == nil:
			add("no frontmatter, while other memories of store %s have one: start the file with ---, name: and description: lines, and ---", d.m.StoreName)
			continue
		case !d.fm.closed:
			add("the frontmatter is never closed: end it with a --- line")
			continue
		}
		var missing []string
		if !d.fm.hasName {
			missing = append(missing, "name")
		}
		if !d.fm.hasDesc {
			missing = append(missing, "description")
		}
		if len(missing) > 0 {
			add("the frontmatter has no %s: add %s", strings.Join(missing, " or "), strings.Join(missing, ": and ")+":")
		}
		stem := strings.TrimSuffix(path.Base(d.m.Path), path.Ext(d.m.Path))
		if d.fm.hasName && fold(d.fm.name) != fold(stem) {
			add("the frontmatter's name %q does not match the file name %q: rename one of them", d.fm.name, path.Base(d.m.Path))
		}
	}
	return out
}

// sizes reports memories over 80% of their store's size limit.
func sizes(docs []*doc) []Finding {
	var out []Finding
	for _, d := range docs {
		n, max := len(d.m.Content), d.m.MaxBytes
		if max > 0 && n*5 > max*4 {
			out = append(out, Finding{Kind: KindSize, Ref: ref(d, 0),
				Message: fmt.Sprintf("%d bytes, %d%% of the store's limit of %d: split it or move what is stale elsewhere before saves start to fail", n, n*100/max, max)})
		}
	}
	return out
}
