package main

import (
	"strings"
	"testing"
)

func TestPayloadRoundTrip(t *testing.T) {
	for _, id := range []saveID{{1, 1, 1}, {4, 50, 12345}, {0, 0, 0}} {
		p := payload(id)
		got, err := parsePayload(p)
		if err != nil {
			t.Fatalf("parsePayload(payload(%s)): %v", id, err)
		}
		if got != id {
			t.Fatalf("parsePayload(payload(%s)) = %s", id, got)
		}
		if n := len(p); n > maxBodyBytes+100 {
			t.Fatalf("payload of %s is %d bytes", id, n)
		}
	}
}

func TestPayloadDetectsTears(t *testing.T) {
	a, b := payload(saveID{1, 2, 3}), payload(saveID{2, 2, 3})
	for name, content := range map[string]string{
		"Empty":       "",
		"Prefix":      a[:len(a)/2],
		"NoTrailer":   strings.TrimSuffix(a, payloadTrailer),
		"Mixed":       a[:len(a)/2] + b[len(a)/2:],
		"Doubled":     a + a,
		"ForeignText": "hello\n",
		"OtherHeader": strings.Replace(a, "s=3", "s=4", 1),
		"FlippedByte": a[:40] + "X" + a[41:],
		"ZerosAtEnd":  a[:len(a)-4] + "\x00\x00\x00\x00",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parsePayload(content); err == nil {
				t.Fatalf("parsePayload accepted a %s payload", name)
			}
		})
	}
}
