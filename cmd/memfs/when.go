package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Ages and times on the command line: one parser for every flag that takes
// them (--older-than, --since, --until, --created-after, --created-before),
// so that what one accepts the others do. --as-of takes the engine's WHEN
// (also the mount's and the API's), with the ages of these (asOfWhen).

// ageUnits are the units an age may use: Go's, and days and weeks, which
// history is measured in.
var ageUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "us": time.Microsecond, "µs": time.Microsecond, "ms": time.Millisecond,
	"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour,
}

var agePart = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h|d|w)`)

// parseAge reads an age such as 30d, 12h, 90m, 1d12h or 0.
func parseAge(s string) (time.Duration, bool) {
	if s == "0" {
		return 0, true
	}
	var total time.Duration
	rest := s
	for rest != "" {
		m := agePart.FindStringSubmatch(rest)
		if m == nil {
			return 0, false
		}
		n, err := strconv.ParseFloat(m[1], 64)
		d := time.Duration(n * float64(ageUnits[m[2]]))
		if err != nil || n*float64(ageUnits[m[2]]) > float64(1<<62) {
			return 0, false
		}
		total += d
		rest = rest[len(m[0]):]
	}
	return total, s != ""
}

// formatAge prints an age as parseAge reads it, in the largest unit that
// divides it: 30d, 12h, 90m (not 720h0m0s).
func formatAge(d time.Duration) string {
	for _, u := range []struct {
		name string
		d    time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if d != 0 && d%u.d == 0 {
			return fmt.Sprintf("%d%s", d/u.d, u.name)
		}
	}
	if d == 0 {
		return "0"
	}
	return d.String()
}

// agoUnits are the words of "2 hours ago" (git's spelling, also 2.hours.ago).
var agoUnits = map[string]time.Duration{
	"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
}

var agoPhrase = regexp.MustCompile(`^([0-9]+)[ .]+(second|minute|hour|day|week|month|year)s?[ .]+ago$`)

// parseWhen reads a point in time: an age (2h, 3d: that long before now),
// "2 hours ago", now, today, yesterday (this time a day ago, as git reads
// it), a date, a local date and time, or an RFC 3339 time.
func parseWhen(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, ok := parseAge(s); ok {
		return now.Add(-d), nil
	}
	switch w := strings.ToLower(strings.TrimSpace(s)); w {
	case "now":
		return now, nil
	case "today", "midnight":
		y, m, d := now.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), nil
	case "yesterday":
		return now.AddDate(0, 0, -1), nil
	default:
		if m := agoPhrase.FindStringSubmatch(w); m != nil {
			n, err := strconv.Atoi(m[1])
			if err == nil && n < 1<<20 {
				switch m[2] {
				case "month":
					return now.AddDate(0, -n, 0), nil
				case "year":
					return now.AddDate(-n, 0, 0), nil
				}
				return now.Add(-time.Duration(n) * agoUnits[m[2]]), nil
			}
		}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			// Times are kept as nanoseconds since 1970 in an int64.
			if last := time.Unix(0, 1<<63-1); t.After(last) {
				t = last
			}
			return t, nil
		}
	}
	return time.Time{}, usageError("%s %q is not a time: give an age such as 2h, 90m or 3d, \"2 hours ago\", yesterday, a date such as 2026-11-30, or an RFC 3339 time", flag, s)
}

// asOfWhen turns a WHEN that counts back from now (an age such as 2h, or
// "2 hours ago") into the time the engine reads. Everything else passes
// as given: a session id, a checkpoint's name (which begins with a letter,
// so reads as no age), a date or a time, which the engine reads in UTC as
// the mount's .history/STORE@WHEN does.
func asOfWhen(s string, now time.Time) string {
	_, age := parseAge(s)
	if !age && !agoPhrase.MatchString(strings.ToLower(strings.TrimSpace(s))) {
		return s
	}
	t, err := parseWhen("--as-of", s, now)
	if err != nil {
		return s
	}
	return t.UTC().Format(time.RFC3339Nano)
}
