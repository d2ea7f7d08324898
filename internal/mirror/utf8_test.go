package mirror

import "testing"

// A write is judged by the runes it writes, from the start of the one it
// begins in: a rune split across writes passes, bytes written that cannot
// be UTF-8 fail. What a write leaves broken after it (an overwritten lead
// byte's continuation) is the save's check of the whole content.
func TestUTF8Write(t *testing.T) {
	const e = "é"    // 0xC3 0xA9
	const euro = "€" // 0xE2 0x82 0xAC
	for _, c := range []struct {
		name      string
		buf, data string
		off       int64
		want      bool
	}{
		{"ascii", "", "hello\n", 0, true},
		{"append after a rune", "caf" + e, "!", 5, true},
		{"rune whole", "", "caf" + e, 0, true},
		{"rune's end, begun by the last write", "caf" + e[:1], e[1:], 4, true},
		{"rune's middle, begun by the last write", "x" + euro[:1], euro[1:2], 2, true},
		{"rune left incomplete, for the next write", "", "caf" + e[:1], 0, true},
		{"continuation after a whole rune", "caf" + e, "\xa9", 5, false},
		{"continuation at the start", "", "\xa9abc", 0, false},
		{"invalid byte in the middle", "", "ab\xffcd", 0, false},
		{"lead byte then ascii", "", "a\xc3b", 0, false},
		{"surrogate", "", "\xed\xa0\x80", 0, false},
		{"overwrite inside text", "hello world", e, 6, true},
		{"overwrite cutting a rune in two", "ab" + e + "cd", "x", 3, false},
		{"overwrite of a lead byte", "ab" + e + "cd", "x", 2, true},
		{"after a hole", "ab", "cd", 10, true},
		{"invalid after a hole", "ab", "\xff", 10, false},
	} {
		if got := utf8Write([]byte(c.buf), []byte(c.data), c.off); got != c.want {
			t.Errorf("%s: utf8Write(%q, %q, %d) = %v, want %v", c.name, c.buf, c.data, c.off, got, c.want)
		}
	}
}
