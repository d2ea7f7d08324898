// Package guard finds credentials in text: private key blocks, cloud keys,
// AI and SaaS tokens, JWTs and URLs with a password. Its rules are data from
// maintained rule sets (gitleaks' default configuration, generated into
// rules_gitleaks.go by scripts/guardrules, and three of detect-secrets'),
// applied the way gitleaks applies them: keywords first, then the rule's
// regular expression, its entropy threshold and its allowlists.
//
// A Finding names a rule and a line, never the text it matched, so that
// whatever reports it cannot leak the secret.
package guard

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
)

// Policy is what a store does with a write that holds a credential.
type Policy string

const (
	Refuse Policy = "refuse" // the write fails (the default)
	Warn   Policy = "warn"   // the write is kept, logged and counted
	Off    Policy = "off"    // nothing is checked
)

// ParsePolicy accepts "refuse", "warn" and "off".
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case Refuse, Warn, Off:
		return p, nil
	}
	return "", fmt.Errorf("credential guard %q: use refuse, warn or off", s)
}

// Finding is one credential: the rule that matched and the line (from 1)
// where the match starts.
type Finding struct {
	Rule string `json:"rule"`
	Line int    `json:"line"`
}

func (f Finding) String() string { return fmt.Sprintf("rule %s at line %d", f.Rule, f.Line) }

// ruleData is a rule as its rule set writes it.
type ruleData struct {
	ID, Description string
	Regex           string
	SecretGroup     int
	Entropy         float64
	Keywords        []string
	// Multiline: a match may span lines (a private key block); the others
	// never hold whitespace, so each is looked for only in the run of
	// non-space characters around a keyword.
	Multiline bool
	// Line: a match may hold spaces but stays on one line.
	Line       bool
	Allowlists []allowData
	verify     func(match string) bool
}

// allowData is an allowlist of a rule or of the whole rule set: a finding
// is allowed when one of its regexes matches the target (the secret, or the
// whole "match" or "line") or the secret holds a stop word; with And, when
// every kind given matches.
type allowData struct {
	And       bool
	Target    string
	Regexes   []string
	StopWords []string
}

type rule struct {
	ruleData
	re *regexp.Regexp
	// minLen is the fewest bytes a match takes: shorter windows are skipped.
	minLen int
	allow  []allowlist
}

type allowlist struct {
	allowData
	res []*regexp.Regexp
}

type ruleSet struct {
	rules  []*rule
	global []allowlist
	// multiline are the rules whose match may span lines.
	multiline []*rule
	// byKeyword lists, for each keyword (lower case), the rules it wakes.
	byKeyword map[string][]*rule
	// pairs maps the first two bytes of a keyword (in any case) to the
	// index in groups of the keywords that start so; 0: none.
	pairs  [1 << 16]uint8
	groups [][]string
}

var rules = sync.OnceValue(func() *ruleSet {
	rs := &ruleSet{byKeyword: map[string][]*rule{}, global: compileAllow(append(append([]allowData{}, gitleaksGlobalAllowlists...), placeholderAllowlists...)), groups: [][]string{nil}}
	for _, d := range append(append([]ruleData{}, gitleaksRules...), detectSecretsRules...) {
		syn, err := syntax.Parse(d.Regex, syntax.Perl)
		if err != nil {
			panic(fmt.Sprintf("guard rule %s: %v", d.ID, err))
		}
		r := &rule{ruleData: d, re: regexp.MustCompile(d.Regex), minLen: minLen(syn), allow: compileAllow(d.Allowlists)}
		rs.rules = append(rs.rules, r)
		if d.Multiline {
			rs.multiline = append(rs.multiline, r)
		}
		for _, k := range d.Keywords {
			k = strings.ToLower(k)
			if len(k) < 2 {
				panic(fmt.Sprintf("guard rule %s: keyword %q is shorter than two bytes", d.ID, k))
			}
			if rs.byKeyword[k] == nil {
				p := uint16(k[0])<<8 | uint16(k[1])
				if rs.pairs[p] == 0 {
					g := uint8(len(rs.groups))
					rs.groups = append(rs.groups, nil)
					// Every spelling of the two bytes leads to the group.
					for _, c0 := range bothCases(k[0]) {
						for _, c1 := range bothCases(k[1]) {
							rs.pairs[uint16(c0)<<8|uint16(c1)] = g
						}
					}
				}
				rs.groups[rs.pairs[p]] = append(rs.groups[rs.pairs[p]], k)
			}
			rs.byKeyword[k] = append(rs.byKeyword[k], r)
		}
	}
	return rs
})

func compileAllow(ds []allowData) []allowlist {
	out := make([]allowlist, len(ds))
	for i, d := range ds {
		out[i].allowData = d
		for _, s := range d.Regexes {
			out[i].res = append(out[i].res, regexp.MustCompile(s))
		}
	}
	return out
}

// placeholderAllowlists let through, for every rule, the placeholders
// that vendors' documentation and templates write where a credential goes,
// as docs/guard.md promises: AWS's documented examples (a key id or a
// secret holding EXAMPLE, such as wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY),
// a URL's password that is a placeholder word with digits at most
// (changeme123, password123, yourpassword), and a Slack webhook whose ids
// are runs of 0 or X.
var placeholderAllowlists = []allowData{
	{Regexes: []string{`EXAMPLE`}},
	{Regexes: []string{`(?i)^(?:your|my|the|some|db|example|dummy|fake|sample|test|secret|super)?[-_]?(?:password|passwd|pass|pwd|secret|changeme|change[-_]?me|changethis|placeholder|example|redacted)[-_]?[0-9]*[!]?$`}},
	{Target: "match", Regexes: []string{`(?i)hooks\.slack\.com/\w+/T[0X]{6,}/B[0X]{6,}/X{6,}`}},
}

// Rules returns the ids of the rules applied, in order.
func Rules() []string {
	var ids []string
	for _, r := range rules().rules {
		ids = append(ids, r.ID)
	}
	return ids
}

// Source names the rule sets and versions the rules come from.
func Source() string {
	return "gitleaks " + gitleaksVersion + " default rules and detect-secrets' AWS, Azure storage and URL password detectors"
}

// Scan returns the credentials in content, in order of line.
func Scan(content string) []Finding { return scan(content, 0, len(content)) }

// ScanChange returns the credentials that a change of a text from before
// to after brings in: every finding of a full scan of after (Scan) whose
// match touches the lines that differ between the two texts (between
// their common beginning and common end). It is the one check of a save,
// used by the engine when a save commits and by the mount at write():
// the cost follows the change, not the file, yet what a full scan of the
// result would refuse because of the change is never let through.
//
// A rule whose match may span lines (a private key block) is completed
// with as much unchanged text as it needs: a key whose BEGIN line the
// file already held (a template) and whose body and END line the change
// fills in is found, as is a key written a line per save. Lines the
// change keeps are not reported: they were checked when they were
// written. A before of "" scans all of after.
func ScanChange(before, after string) []Finding {
	if before == "" {
		return Scan(after)
	}
	lo := commonPrefix(before, after)
	if lo == len(after) {
		return nil // after is a prefix of before: nothing added
	}
	hi := commonSuffix(before[lo:], after[lo:])
	return scan(after, lo, len(after)-hi)
}

// ScanRange returns the credentials whose match touches the lines of
// content that hold content[lo:hi] (a write's region), found as
// ScanChange finds those of a change.
func ScanRange(content string, lo, hi int) []Finding { return scan(content, lo, hi) }

// ScanName returns the credentials in a path's names (each segment, and
// each part of a segment between dots, as a line of its own, so that a
// token used as a file name with an extension is found). Their lines are
// 0: a finding of a name has none.
func ScanName(path string) []Finding {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	text := strings.Join(segs, "\n") + "\n" + strings.ReplaceAll(strings.Join(segs, "\n"), ".", "\n") + "\n"
	seen := map[string]bool{}
	var out []Finding
	for _, f := range Scan(text) {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			out = append(out, Finding{Rule: f.Rule})
		}
	}
	return out
}

// NameShown is path as a message or a log line may show it: whole when no
// name in it holds a credential, else cut before the first name that
// does ("/a/…"), so that a refusal never repeats the credential it
// refuses.
func NameShown(path string) string {
	if len(ScanName(path)) == 0 {
		return path
	}
	shown := ""
	for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		if len(ScanName(seg)) > 0 {
			break
		}
		shown += "/" + seg
	}
	return shown + "/…"
}

// commonPrefix is the length of the longest common prefix of a and b,
// compared a block at a time (string comparison is vectorised).
func commonPrefix(a, b string) int {
	const block = 256
	n, i := min(len(a), len(b)), 0
	for i+block <= n && a[i:i+block] == b[i:i+block] {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b string) int {
	const block = 256
	n, i := min(len(a), len(b)), 0
	for i+block <= n && a[len(a)-i-block:len(a)-i] == b[len(b)-i-block:len(b)-i] {
		i += block
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// scan looks for the credentials whose match touches the lines of content
// that hold content[lo:hi]: those whose keyword lies in those lines, and
// those of a rule whose match may span lines whose keyword comes before
// them.
func scan(content string, lo, hi int) []Finding {
	lo = strings.LastIndexByte(content[:lo], '\n') + 1
	if i := strings.IndexByte(content[hi:], '\n'); i >= 0 {
		hi += i + 1
	} else {
		hi = len(content)
	}
	if lo >= hi {
		return nil
	}
	rs := rules()
	type window struct {
		r     *rule
		start int
	}
	var seen map[window]bool
	found := map[Finding]bool{}
	// A multi-line match whose keyword lies in the unchanged text before
	// the change counts when it reaches into the change.
	for _, r := range rs.multiline {
		for _, k := range r.Keywords {
			for p := indexFold(content[:lo], k, 0); p >= 0; p = indexFold(content[:lo], k, p+1) {
				start := strings.LastIndexByte(content[:p], '\n') + 1
				if seen == nil {
					seen = map[window]bool{}
				}
				if !seen[window{r, start}] {
					seen[window{r, start}] = true
					r.find(content, start, len(content), lo, found)
				}
			}
		}
	}
	// One pass over the bytes finds every keyword, as gitleaks' keyword
	// trie does; a keyword wakes its rules on the text around it.
	for p := lo; p+1 < hi; p++ {
		g := rs.pairs[uint16(content[p])<<8|uint16(content[p+1])]
		if g == 0 {
			continue
		}
		for _, k := range rs.groups[g] {
			if !hasPrefixFold(content[p:], k) {
				continue
			}
			for _, r := range rs.byKeyword[k] {
				var start, end int
				switch {
				case r.Multiline:
					start, end = strings.LastIndexByte(content[:p], '\n')+1, len(content)
				case r.Line:
					start, end = lineBounds(content, p)
				default:
					start, end = tokenAround(content, p, p+len(k))
				}
				if end-start < r.minLen {
					continue
				}
				if seen == nil {
					seen = map[window]bool{}
				}
				if seen[window{r, start}] {
					continue
				}
				seen[window{r, start}] = true
				r.find(content, start, end, 0, found)
			}
		}
	}
	out := make([]Finding, 0, len(found))
	for f := range found {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Rule < out[j].Rule
	})
	return out
}

// tokenAround widens [i, j) to the run of non-space characters holding it,
// with the space that ends it: a rule's trailing context may be that space.
func tokenAround(s string, i, j int) (int, int) {
	for i > 0 && !isSpace(s[i-1]) {
		i--
	}
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	if j < len(s) {
		j++
	}
	return i, j
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// find adds to found the rule's matches in content[start:end] that pass its
// entropy threshold, check and allowlists, as gitleaks' detectRule decides,
// and reach content[reach:] (reach 0: all).
func (r *rule) find(content string, start, end, reach int, found map[Finding]bool) {
	w := content[start:end]
	for _, m := range r.re.FindAllStringIndex(w, -1) {
		if start+m[1] <= reach {
			continue
		}
		match := strings.Trim(w[m[0]:m[1]], "\n")
		secret := match
		if groups := r.re.FindStringSubmatch(match); len(groups) >= 2 {
			if r.SecretGroup > 0 {
				if len(groups) <= r.SecretGroup {
					continue
				}
				secret = groups[r.SecretGroup]
			} else {
				for _, g := range groups[1:] {
					if g != "" {
						secret = g
						break
					}
				}
			}
		}
		if r.Entropy != 0 && entropy(secret) <= r.Entropy {
			continue
		}
		if r.verify != nil && !r.verify(match) {
			continue
		}
		at := start + m[0]
		line := lineAt(content, at)
		if allowed(rules().global, secret, match, line) || allowed(r.allow, secret, match, line) {
			continue
		}
		found[Finding{Rule: r.ID, Line: strings.Count(content[:at], "\n") + 1}] = true
	}
}

func lineAt(s string, at int) string {
	i, j := lineBounds(s, at)
	return strings.TrimSuffix(s[i:j], "\n")
}

// lineBounds returns the line of s holding at, with its newline.
func lineBounds(s string, at int) (int, int) {
	i := strings.LastIndexByte(s[:at], '\n') + 1
	j := strings.IndexByte(s[at:], '\n')
	if j < 0 {
		return i, len(s)
	}
	return i, at + j + 1
}

func allowed(lists []allowlist, secret, match, line string) bool {
	for _, a := range lists {
		target := secret
		switch a.Target {
		case "match":
			target = match
		case "line":
			target = line
		}
		byRegex := false
		for _, re := range a.res {
			if re.MatchString(target) {
				byRegex = true
				break
			}
		}
		byWord := false
		lower := strings.ToLower(secret)
		for _, w := range a.StopWords {
			if strings.Contains(lower, w) {
				byWord = true
				break
			}
		}
		if a.And {
			if (len(a.res) == 0 || byRegex) && (len(a.StopWords) == 0 || byWord) {
				return true
			}
		} else if byRegex || byWord {
			return true
		}
	}
	return false
}

// entropy is the Shannon entropy of s in bits per character, as gitleaks
// computes it.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	var e float64
	inv := 1 / float64(len(s))
	for _, n := range counts {
		f := float64(n) * inv
		e -= f * math.Log2(f)
	}
	return e
}

// lowerByte lowers ASCII letters (the keywords are ASCII).
var lowerByte = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] += 'a' - 'A'
		}
	}
	return t
}()

// bothCases returns c and, for an ASCII letter, its other case.
func bothCases(c byte) []byte {
	switch {
	case 'a' <= c && c <= 'z':
		return []byte{c, c - 'a' + 'A'}
	case 'A' <= c && c <= 'Z':
		return []byte{c, c - 'A' + 'a'}
	}
	return []byte{c}
}

// indexFold is the first index from from of k (lower case) in s in any
// case, or -1.
func indexFold(s, k string, from int) int {
	c0 := bothCases(k[0])
	for from < len(s) {
		i := -1
		for _, c := range c0 {
			if j := strings.IndexByte(s[from:], c); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		if i < 0 {
			return -1
		}
		if hasPrefixFold(s[from+i:], k) {
			return from + i
		}
		from += i + 1
	}
	return -1
}

// hasPrefixFold reports whether s starts with k (lower case) in any case.
func hasPrefixFold(s, k string) bool {
	if len(s) < len(k) {
		return false
	}
	for i := 0; i < len(k); i++ {
		if lowerByte[s[i]] != k[i] {
			return false
		}
	}
	return true
}

// minLen is the fewest bytes a match of re takes (a rune takes one byte
// at least).
func minLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLen(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n += minLen(s)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, s := range re.Sub {
			if m := minLen(s); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0 // empty-width assertions, star, quest, empty match
}
