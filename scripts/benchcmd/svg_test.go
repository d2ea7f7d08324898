package main

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// The chart is well-formed SVG with one bar per phase and target and the
// memfs bars labelled with their ratio to the loopback.
func TestSVGChart(t *testing.T) {
	cfg, err := parseFlags([]string{"--targets", "tmpfs,loopback,memfs"})
	if err != nil {
		t.Fatal(err)
	}
	rep := newReport(cfg, t.TempDir())
	ops, tmp, loop, mem := map[string]int{}, map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, p := range phaseNames {
		ops[p] = 1000
		tmp[p], loop[p], mem[p] = 0.01, 0.25, 0.5 // 100,000, 4,000 and 2,000 ops/s
	}
	rep.addRound("tmpfs", tmp, ops)
	rep.addRound("loopback", loop, ops)
	rep.addRound("memfs", mem, ops)
	var b strings.Builder
	if err := writeSVG(&b, rep); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	d := xml.NewDecoder(strings.NewReader(svg))
	bars := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "title" {
			bars++
		}
	}
	if want := 3 * len(phaseNames); bars != want {
		t.Errorf("%d bars, want %d (3 targets × %d phases)", bars, want, len(phaseNames))
	}
	for _, want := range []string{"2k/s (0.50× loopback)", ">100k<", "create memfs: 2000 ops/s"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q:\n%s", want, svg)
		}
	}
	if err := writeSVG(io.Discard, newReport(cfg, t.TempDir())); err == nil || !strings.Contains(err.Error(), "no phases") {
		t.Errorf("a report without phases: %v, want an error saying so", err)
	}
}
