package guard_test

import (
	"os"
	"strings"
	"testing"

	"github.com/memfs/memfs/guard"
)

// text returns n bytes of this repository's documentation.
func text(b *testing.B, n int) string {
	doc, err := os.ReadFile("../docs/design.md")
	if err != nil {
		b.Fatal(err)
	}
	return strings.Repeat(string(doc), n/len(doc)+1)[:n]
}

func BenchmarkScan2KiB(b *testing.B)   { benchScan(b, 2<<10) }
func BenchmarkScan100KiB(b *testing.B) { benchScan(b, 100<<10) }

func benchScan(b *testing.B, n int) {
	t := text(b, n)
	b.SetBytes(int64(n))
	for b.Loop() {
		guard.Scan(t)
	}
}

// BenchmarkScanChangeLine100KiB is a save that adds a line to a 100 KiB memory.
func BenchmarkScanChangeLine100KiB(b *testing.B) {
	base := text(b, 100<<10)
	i := strings.IndexByte(base[len(base)/2:], '\n') + len(base)/2 + 1
	content := base[:i] + "a new line about the plan\n" + base[i:]
	for b.Loop() {
		guard.ScanChange(base, content)
	}
}
