package memtool

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/memfs/memfs/versions"
)

// root is the directory Claude's memory paths start with.
const root = "/memories"

// storePath maps a tool path to the path of a memory in the store ("/" for
// /memories itself), or returns the error Claude is shown. A trailing slash
// is dropped (Claude writes "/memories/notes/" for a directory); anything
// else the engine's path rules refuse stays refused.
func storePath(p string) (string, *Result) {
	refuse := func(r Result) (string, *Result) { return "", &r }
	if p == "" {
		return refuse(fail("The memory tool needs a path under /memories, e.g. /memories/notes.md"))
	}
	if i, r := controlChar(p); i >= 0 {
		return refuse(fail("The path %s contains the control character U+%04X at byte %d: memory paths are printable text; remove it", shown(p), r, i))
	}
	if strings.ContainsRune(p, '\\') {
		return refuse(fail("Path %s would escape /memories directory: a backslash is not a path separator here; use / between directories", shown(p)))
	}
	if encodedTraversal(p) {
		return refuse(fail("Path %s would escape /memories directory: it hides a traversal in percent-encoding; write the path plainly", shown(p)))
	}
	if p != root && !strings.HasPrefix(p, root+"/") {
		return refuse(fail("Path must start with /memories, got: %s", shown(p)))
	}
	rest := strings.TrimRight(p[len(root):], "/")
	if rest == "" {
		return "/", nil
	}
	for _, seg := range strings.Split(rest[1:], "/") {
		if seg == ".." {
			return refuse(fail("Path %s would escape /memories directory", shown(p)))
		}
	}
	if err := versions.ValidatePath(rest); err != nil {
		return refuse(fail("The path %s is not a valid memory path: %s", shown(p), pathProblem(err, rest)))
	}
	return rest, nil
}

// pathProblem is the engine's reason, naming the path as Claude wrote it.
// A character or segment the rules refuse is refused in the /memories
// spelling too, whose message points into the path Claude sent; a length
// limit applies to the store path, whose message gives its numbers.
func pathProblem(err error, store string) string {
	tool := root + store
	if versions.ErrorCode(err) == versions.CodeInvalid {
		if terr := versions.ValidatePath(tool); versions.ErrorCode(terr) == versions.CodeInvalid {
			return terr.Error()
		}
	}
	return strings.ReplaceAll(err.Error(), strconv.Quote(store), strconv.Quote(tool))
}

// controlChar returns the byte offset and value of the first control
// character (NUL included) in p, or -1.
func controlChar(p string) (int, rune) {
	for i, r := range p {
		if unicode.Is(unicode.Cc, r) {
			return i, r
		}
	}
	return -1, 0
}

// encodedTraversal reports whether percent-decoding p (repeatedly, for
// double encoding) reveals a .. segment, a backslash or a control
// character that the plain spelling does not show. A literal % in a name,
// as in "50%.md", stays allowed.
func encodedTraversal(p string) bool {
	cur := p
	for range 3 {
		if !strings.Contains(cur, "%") {
			return false
		}
		dec, err := url.PathUnescape(cur)
		if err != nil || dec == cur {
			return false
		}
		if strings.ContainsRune(dec, '\\') || hasDotDot(dec) {
			return true
		}
		if i, _ := controlChar(dec); i >= 0 {
			return true
		}
		cur = dec
	}
	return false
}

func hasDotDot(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// shown is p as it can be printed in a result: itself, or quoted when it
// holds characters that would not show.
func shown(p string) string {
	for _, r := range p {
		if !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(p)
		}
	}
	return p
}
