package main

// A newcomer's first hour, the rest of the third pass: a store's limits for
// scripts, hints for likely typos, log lines, run's sandbox, completion and
// the cosmetic items. Each test drives the built binary.

import (
	"encoding/json"
	"strings"
	"testing"
)

// store get --format json carries the limits, what the store holds and its
// guard, as the text does; store update changes the limits, never below
// what the store holds.
func TestNewcomer3StoreLimits(t *testing.T) {
	e := newE2EEnv(t)
	e.cli(t, "store", "create", "--name", "Notes", "--max-memories", "5", "--max-history-bytes", "0")
	e.cli(t, "memory", "create", "Notes", "--path", "/a.md", "--content", strings.Repeat("a", 300))
	e.cli(t, "memory", "create", "Notes", "--path", "/b.md", "--content", "b")
	e.cli(t, "memory", "create", "Notes", "--path", "/c.md", "--content", "c")

	var got map[string]any
	e.cliJSON(t, &got, "store", "get", "Notes")
	text := e.cli(t, "store", "get", "Notes")
	for key, want := range map[string]any{
		"type": "memory_store", "name": "Notes", "max_memories": 5.0, "max_memory_bytes": 102400.0,
		"max_directories": 2000.0, "max_history_bytes": nil, "memory_count": 3.0, "guard": "refuse",
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("store get --format json: %s = %v (present %v), want %v\n%v", key, v, ok, want, got)
		}
	}
	hb, ok := got["history_bytes"].(float64)
	if !ok || hb < 302 {
		t.Errorf("store get --format json: history_bytes = %v, want at least the 302 bytes saved", got["history_bytes"])
	}
	for label, want := range map[string]string{"history bytes:": jsonNumber(hb) + " (no quota)", "memories:": "3", "max memories:": "5", "guard:": "refuse"} {
		if got := fieldLine(text, label); got != want {
			t.Errorf("store get shows %s %q, want %q as the JSON says\n%s", label, got, want, text)
		}
	}

	// Below what the store holds: one line, exit 5, nothing changed.
	for _, c := range []struct {
		flag, value, want string
	}{
		{"--max-memories", "2", "holds 3 memories"},
		{"--max-memory-bytes", "299", "memory of 300 bytes"},
	} {
		_, errs, code := e.run(t, "store", "update", "Notes", c.flag, c.value)
		if code != exitInvalid || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("store update %s %s: exit %d %q, want %d and one line saying %q", c.flag, c.value, code, errs, exitInvalid, c.want)
		}
	}
	if _, errs, code := e.run(t, "store", "update", "Notes", "--max-memories", "0"); code != exitUsage || !strings.Contains(errs, "at least 1") {
		t.Errorf("store update --max-memories 0: exit %d %q, want %d", code, errs, exitUsage)
	}

	e.cliJSON(t, &got, "store", "update", "Notes", "--max-memories", "3", "--max-memory-bytes", "300")
	if got["max_memories"] != 3.0 || got["max_memory_bytes"] != 300.0 {
		t.Errorf("store update printed limits %v and %v, want 3 and 300", got["max_memories"], got["max_memory_bytes"])
	}
	// The new limits hold.
	if _, errs, code := e.run(t, "memory", "create", "Notes", "--path", "/d.md", "--content", "d"); code != exitInvalid || !strings.Contains(errs, "maximum of 3") {
		t.Errorf("a fourth memory past --max-memories 3: exit %d %q, want %d", code, errs, exitInvalid)
	}
	if _, errs, code := e.run(t, "memory", "update", "Notes", "/b.md", "--content", strings.Repeat("b", 301)); code != exitInvalid || !strings.Contains(errs, "limit of 300") {
		t.Errorf("a memory past --max-memory-bytes 300: exit %d %q, want %d", code, errs, exitInvalid)
	}
	e.cli(t, "store", "update", "Notes", "--max-memories", "10")
	e.cli(t, "memory", "create", "Notes", "--path", "/d.md", "--content", "d")
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// fieldLine is the value store get and session get show on the line that
// begins with label.
func fieldLine(text, label string) string {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, label); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}
