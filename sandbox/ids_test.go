package sandbox

import "testing"

func TestHostIDsIn(t *testing.T) {
	if got := hostIDsIn(0); len(got) == 0 || got[0] != "user root (0)" {
		t.Errorf("hostIDsIn(0) = %q, want root first", got)
	}
	if got := hostIDsIn(firstIDBase); len(got) != 0 {
		t.Errorf("hostIDsIn(%d) = %q, want none", firstIDBase, got)
	}
}
