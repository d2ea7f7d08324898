package versions

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// pageSize applies the listing limits: 0 means the default, larger than the
// maximum means the maximum, and the full view holds at most
// MaxFullViewPage items.
func pageSize(limit int, view View) (int, error) {
	if limit < 0 {
		return 0, errorf(CodeInvalid, "limit %d is negative: pass a page size from 1 to %d", limit, MaxPageSize)
	}
	if view != "" && view != ViewBasic && view != ViewFull {
		return 0, errorf(CodeInvalid, "view %q is not basic or full", view)
	}
	max, def := MaxPageSize, DefaultPageSize
	if view == ViewFull {
		max, def = MaxFullViewPage, MaxFullViewPage
	}
	if limit == 0 {
		limit = def
	}
	return min(limit, max), nil
}

// Cursors are opaque to callers: base64url of a position.
func encodeCursor(pos string) *string {
	c := base64.RawURLEncoding.EncodeToString([]byte(pos))
	return &c
}

func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) == 0 {
		return "", badCursor(c)
	}
	return string(b), nil
}

func encodeSeqCursor(seq int64) *string { return encodeCursor("s" + strconv.FormatInt(seq, 10)) }

func decodeSeqCursor(c string) (int64, error) {
	s, err := decodeCursor(c)
	if err != nil || s[0] != 's' {
		return 0, badCursor(c)
	}
	n, err := strconv.ParseInt(s[1:], 10, 64)
	if err != nil || n <= 0 {
		return 0, badCursor(c)
	}
	return n, nil
}

func badCursor(c string) error {
	return errorf(CodeInvalid, "page cursor %q is not one this listing issued: pass the next_page value of the previous page", c)
}

// A cursor is bound to the listing that issued it: the store and every
// filter, all but the page size and the view. Used with other parameters
// it would silently skip or repeat items, so it is refused.
func listingScope(parts ...any) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%#v", parts)))
	return hex.EncodeToString(h[:6])
}

// scopeCursor wraps a listing's next-page cursor with its scope.
func scopeCursor(next *string, scope string) *string {
	if next == nil {
		return nil
	}
	return encodeCursor(scope + ":" + *next)
}

// unscopeCursor checks that a cursor came from a listing with this scope
// and returns the position inside it ("" for no cursor).
func unscopeCursor(c, scope string) (string, error) {
	if c == "" {
		return "", nil
	}
	s, err := decodeCursor(c)
	if err != nil {
		return "", err
	}
	tag, inner, ok := strings.Cut(s, ":")
	if !ok || inner == "" {
		return "", badCursor(c)
	}
	if tag != scope {
		return "", errorf(CodeInvalid, "page cursor %q was issued by a listing with other parameters: repeat the listing's store and filters exactly with its next_page, or start again without a cursor", c)
	}
	return inner, nil
}
