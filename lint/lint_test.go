package lint_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/memfs/memfs/lint"
)

func kinds(fs []lint.Finding) string {
	var out []string
	for _, f := range fs {
		k := f.Kind + " " + f.Ref.Path
		if f.Other != nil {
			k += " " + f.Other.Path
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// The contradiction heuristic's edges: what it must report and what it
// must leave alone.
func TestContradictionEdges(t *testing.T) {
	for _, c := range []struct {
		name string
		ms   []lint.Memory
		want string
	}{
		{"sibling headings are different things", []lint.Memory{{Path: "/team.md", Content: "# Team\n## Anna\n- Role: designer\n## Ben\n- Role: engineer\n"}}, ""},
		{"an addendum restates", []lint.Memory{{Path: "/me.md", Content: "# Me\n- Editor: vim\n- Shell: zsh\n## Update\n- Editor: emacs\n"}}, "contradiction /me.md /me.md"},
		{"neighbouring list items are a list", []lint.Memory{{Path: "/todo.md", Content: "- Task: buy milk\n- Task: call Bob\n"}}, ""},
		{"a refinement agrees", []lint.Memory{{Path: "/a.md", Content: "- OS: Debian\n\n- OS: Debian 12\n"}}, ""},
		{"spacing of a value", []lint.Memory{{Path: "/a.md", Content: "- RAM: 32 GB\n\n- RAM: 32GB\n"}}, ""},
		{"unrelated files are not compared by key", []lint.Memory{
			{Path: "/anna.md", Content: "- Role: designer\n"}, {Path: "/ben.md", Content: "- Role: engineer\n"}}, ""},
		{"statements that end differently", []lint.Memory{
			{Path: "/a.md", Content: "The staging database runs on host db-2\n"}, {Path: "/b.md", Content: "The staging database runs on host db-3\n"}}, "contradiction /a.md /b.md"},
		{"an insertion is no contradiction", []lint.Memory{
			{Path: "/a.md", Content: "The public API is stable now\n"}, {Path: "/b.md", Content: "The public API is not stable now\n"}}, ""},
		{"different subjects, same ending", []lint.Memory{
			{Path: "/a.md", Content: "Anna will review the migration today\n"}, {Path: "/b.md", Content: "Ben will review the migration today\n"}}, ""},
		{"code blocks are not prose", []lint.Memory{{Path: "/a.md", Content: "```\nx: 1\n\nx: 2\n```\n"}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := range c.ms {
				c.ms[i].StoreID, c.ms[i].StoreName = "memstore_a", "A"
			}
			if got := kinds(lint.Check(c.ms)); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestSizeAndFrontmatter(t *testing.T) {
	ms := []lint.Memory{
		{StoreID: "s", Path: "/big.md", Content: "---\nname: big\ndescription: d\n---\n" + strings.Repeat("x", 900), MaxBytes: 1000},
		{StoreID: "s", Path: "/small.md", Content: "---\nname: small\n---\nok\n", MaxBytes: 1000},
		{StoreID: "s", Path: "/open.md", Content: "---\nname: open\n", MaxBytes: 1000},
		{StoreID: "t", Path: "/plain.md", Content: "no frontmatter in this store\n", MaxBytes: 1000},
	}
	got := lint.Check(ms)
	if k := kinds(got); k != "frontmatter /open.md; frontmatter /small.md; near_size_limit /big.md" {
		t.Fatalf("%s\n%v", k, fmt.Sprint(got))
	}
}
