package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// A payload is the whole content of one save: a header naming who wrote it,
// then a body derived from the header, then a trailer. Because the body can
// be regenerated from the header, any version whose content is a prefix, a
// mix of two saves or anything else than one complete save fails to parse.
const (
	payloadMagic   = "memfs-crash"
	payloadTrailer = "end\n"
	maxBodyBytes   = 2048
)

type saveID struct {
	Writer, Cycle, Seq int
}

func (id saveID) String() string { return fmt.Sprintf("w%d/c%d/s%d", id.Writer, id.Cycle, id.Seq) }

// bodySize varies the size of saves deterministically, so that saves of
// different lengths overwrite each other.
func bodySize(id saveID) int {
	h := sha256.Sum256([]byte(id.String()))
	return 16 + (int(h[0])<<8|int(h[1]))%(maxBodyBytes-16)
}

func payload(id saveID) string {
	n := bodySize(id)
	header := fmt.Sprintf("%s w=%d c=%d s=%d n=%d\n", payloadMagic, id.Writer, id.Cycle, id.Seq, n)
	return header + body(header, n) + payloadTrailer
}

// body is n bytes of hex lines chained from the header's hash.
func body(header string, n int) string {
	var b strings.Builder
	sum := sha256.Sum256([]byte(header))
	for b.Len() < n {
		line := hex.EncodeToString(sum[:]) + "\n"
		if b.Len()+len(line) > n {
			line = line[:n-b.Len()]
		}
		b.WriteString(line)
		sum = sha256.Sum256(sum[:])
	}
	return b.String()
}

// parsePayload returns the save content is, or an error saying how it
// differs from any complete payload.
func parsePayload(content string) (saveID, error) {
	nl := strings.IndexByte(content, '\n')
	if nl < 0 {
		return saveID{}, fmt.Errorf("no header line in %d bytes", len(content))
	}
	var id saveID
	var n int
	var magic string
	if _, err := fmt.Sscanf(content[:nl], "%s w=%d c=%d s=%d n=%d", &magic, &id.Writer, &id.Cycle, &id.Seq, &n); err != nil || magic != payloadMagic {
		return saveID{}, fmt.Errorf("header %.80q is not a crash payload header", content[:nl])
	}
	if want := payload(id); content != want {
		return id, fmt.Errorf("content of %s is torn: %d bytes, want %d (%s)", id, len(content), len(want), firstDiff(content, want))
	}
	return id, nil
}

func firstDiff(got, want string) string {
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at byte %d", i)
		}
	}
	return "one is a prefix of the other"
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
