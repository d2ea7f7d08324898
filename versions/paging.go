package versions

import (
	"encoding/base64"
	"strconv"
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
