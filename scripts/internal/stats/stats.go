// Package stats is the summaries the measuring commands under scripts/
// report: medians of runs and percentiles of latencies.
package stats

import (
	"math"
	"slices"
	"time"
)

// Median of xs (the mean of the two middle ones when their count is even);
// NaN when there is none, so a missing figure never reads as 0.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of ds:
// the smallest sample with at least p% of the samples at or below it; 0
// when there is none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}
