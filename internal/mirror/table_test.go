package mirror_test

import (
	"os"
	"strings"
	"testing"
)

// docTable reads the transition table of the package doc: from, event,
// engine, to.
func docTable(t *testing.T) map[[3]string]bool {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[[3]string]bool{}
	in := false
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "//"))
		switch {
		case len(f) == 4 && f[0] == "from" && f[1] == "event":
			in = true
		case in && len(f) == 4:
			rows[[3]string{f[0], f[1], f[3]}] = true
		case in:
			return rows
		}
	}
	t.Fatal("no transition table in doc.go")
	return nil
}

// TestTransitionTable is the behaviour suite (scenarios, one subtest
// each) and holds the code to the table in the package doc: every change
// of state the suite makes is one of its rows, and every row is made by
// some scenario.
func TestTransitionTable(t *testing.T) {
	table := docTable(t)
	seen := map[[3]string]bool{}
	for _, m := range runScenarios(t) {
		from := m.From.String()
		if m.From == 0 {
			from = "-"
		}
		k := [3]string{from, m.Event, m.To.String()}
		if !table[k] {
			t.Errorf("the code moves %s --%s--> %s, which the table in doc.go does not list", k[0], k[1], k[2])
		}
		seen[k] = true
	}
	for k := range table {
		if !seen[k] {
			t.Errorf("no scenario makes the table's row %s --%s--> %s", k[0], k[1], k[2])
		}
	}
}
