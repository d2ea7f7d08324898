package main

import (
	"io"
	"strings"
	"testing"
)

func TestInterspersed(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	for _, tc := range []struct{ in, want string }{
		{"memory create S --path /a --content x", "memory create --path /a --content x S"},
		{"memory get S /a --format json", "--format json memory get S /a"},
		{"--db d memory get S /a --db=e", "--db d --db=e memory get S /a"},
		{"memory update S /a --file - --if-sha256 abc", "memory update --file - --if-sha256 abc S /a"},
		{"memory update S /a --content -x", "memory update --content -x S /a"},
		{"store list --include-archived --limit 2", "store list --include-archived --limit 2"},
		{"memory update S M --help", "memory update --help"},
		{"version get S -odd", "version get -odd S"},
		{"log S -- -odd", "log S -- -odd"},
		{"diff S --bogus v1", "diff --bogus S v1"},
		{"nosuch --x y", "nosuch --x y"},
		{"store --help", "store --help"},
		{"store --format json list", "--format json store list"},
		{"run --store S -- sh -c x --format json", "run --store S -- sh -c x --format json"},
		{"run --store S sh -c x --format json", "run --store S -- sh -c x --format json"},
		{"run --store S --format json -- sh", "--format json run --store S -- sh"},
	} {
		args := append([]string{"memfs"}, strings.Fields(tc.in)...)
		got := strings.Join(interspersed(app, args)[1:], " ")
		if got != tc.want {
			t.Errorf("interspersed(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDiffLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a\nb\n", []string{"a\n", "b\n"}},
		{"a\nb", []string{"a\n", "b\n\\ No newline at end of file\n"}},
	} {
		got := diffLines(tc.in)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("diffLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
