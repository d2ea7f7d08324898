package main

import "math"

// ratio is a/b, NaN when either side is missing or b is zero.
func ratio(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return math.NaN()
	}
	return a / b
}
