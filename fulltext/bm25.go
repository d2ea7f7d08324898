package fulltext

import (
	"encoding/binary"
	"errors"
	"math"
)

// BM25's usual constants: k1 bounds what repeating a word adds, b how much
// a long document is discounted.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// BM25 scores one row from SQLite FTS4's matchinfo(table, 'pcnalx') blob:
// for each of the first phrases (the positive terms; excluded ones follow
// them and are not scored) and each column, the column's weight times the
// phrase's inverse document frequency times its saturated, length
// normalised frequency in the row. weights has one entry per column.
func BM25(matchinfo []byte, phrases int, weights []float64) (float64, error) {
	if len(matchinfo)%4 != 0 || len(matchinfo) < 12 {
		return 0, errors.New("matchinfo blob too short")
	}
	v := make([]uint32, len(matchinfo)/4)
	for i := range v {
		v[i] = binary.NativeEndian.Uint32(matchinfo[4*i:])
	}
	p, c, n := int(v[0]), int(v[1]), float64(v[2])
	if len(v) != 3+2*c+3*p*c || c != len(weights) || phrases > p {
		return 0, errors.New("matchinfo blob does not match the query")
	}
	avg, length, x := v[3:3+c], v[3+c:3+2*c], v[3+2*c:]
	var score float64
	for i := 0; i < phrases; i++ {
		for j := 0; j < c; j++ {
			hits := x[3*(i*c+j)]
			docs := float64(x[3*(i*c+j)+2])
			if hits == 0 || weights[j] == 0 {
				continue
			}
			idf := math.Log(1 + (n-docs+0.5)/(docs+0.5))
			a := float64(avg[j])
			if a == 0 {
				a = 1
			}
			tf := float64(hits)
			norm := tf + bm25K1*(1-bm25B+bm25B*float64(length[j])/a)
			score += weights[j] * idf * tf * (bm25K1 + 1) / norm
		}
	}
	return score, nil
}
