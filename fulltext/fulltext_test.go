package fulltext_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/memfs/memfs/fulltext"
)

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"Hello, Wörld! v2.3": "hello wörld v2 3",
		"snake_case-name":    "snake case name",
		"東京都に住む":             "東京 京都 都に に住 住む む",
		"Go言語":               "go 言語 語",
		"서울에서 만나요":           "서울 울에 에서 서 만나 나요 요",
		"ÉTÉ\tçà":            "été çà",
		"":                   "",
		"--- *** ///":        "",
		"a\xffb":             "a b",
		"Ж,ж":                "ж ж",
		"x京":                 "x 京",
	} {
		if got := fulltext.Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string][2]string{
		`laptop ram`:            {`"laptop" "ram"`, `'laptop' & 'ram'`},
		`"runs debian" -milk`:   {`"runs debian" NOT "milk"`, `('runs' <-> 'debian') & !'milk'`},
		`deb* -"old model"`:     {`"deb*" NOT "old model"`, `'deb':* & !('old' <-> 'model')`},
		`京都`:                    {`"京都"`, `'京都'`},
		`都`:                     {`"都*"`, `'都':*`},
		`東京都`:                   {`"東京 京都"`, `('東京' <-> '京都')`},
		`laptop OR milk`:        {`"laptop" "or" "milk"`, `'laptop' & 'or' & 'milk'`},
		`it's`:                  {`"it s"`, `('it' <-> 's')`},
		`') ; DROP TABLE x; --`: {`"drop" "table" "x"`, `'drop' & 'table' & 'x'`},
	} {
		q, err := fulltext.Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if got := q.FTS4(); got != want[0] {
			t.Errorf("FTS4(%q) = %s, want %s", in, got, want[0])
		}
		if got := q.TSQuery(); got != want[1] {
			t.Errorf("TSQuery(%q) = %s, want %s", in, got, want[1])
		}
	}
	for _, in := range []string{`"unclosed`, `-only`, `!!!`, ``, strings.Repeat("a ", 600), strings.Repeat("w ", 40), "\xff"} {
		_, err := fulltext.Parse(in)
		var se *fulltext.SyntaxError
		if !errors.As(err, &se) || strings.Contains(se.Msg, "\n") {
			t.Errorf("Parse(%.30q) = %v, want a one-line SyntaxError", in, err)
		}
	}
}

func TestMatchingLines(t *testing.T) {
	q, err := fulltext.Parse(`"runs debian" ram*`)
	if err != nil {
		t.Fatal(err)
	}
	got := q.MatchingLines("# Laptop\n- RAM: 32 GB\nit runs Debian 12\nDebian runs\n", 0)
	if len(got) != 2 || got[0].Number != 2 || got[1].Number != 3 || got[1].Text != "it runs Debian 12" {
		t.Fatalf("got %+v", got)
	}
}

// BM25 from a matchinfo blob: a row with more hits in a shorter column
// scores higher, and a phrase past the scored ones counts nothing.
func TestBM25(t *testing.T) {
	blob := func(hitsPath, hitsContent, length uint32) []byte {
		// p=2 phrases, c=2 columns, n=10 rows, a: avg 2 and 100, l: 2 and length,
		// x: for each phrase and column hits-this-row, hits-all, docs-with-hits.
		v := []uint32{2, 2, 10, 2, 100, 2, length,
			hitsPath, 5, 3, hitsContent, 50, 4,
			0, 0, 0, 7, 70, 9}
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.NativeEndian.PutUint32(b[4*i:], x)
		}
		return b
	}
	w := []float64{3, 1}
	a, err := fulltext.BM25(blob(1, 3, 50), 1, w)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := fulltext.BM25(blob(0, 3, 50), 1, w)
	c, _ := fulltext.BM25(blob(0, 3, 500), 1, w)
	if !(a > b && b > c && c > 0) {
		t.Fatalf("scores %v %v %v", a, b, c)
	}
	if _, err := fulltext.BM25([]byte{1, 2, 3}, 1, w); err == nil {
		t.Fatal("a short blob was read")
	}
}
