package versions_test

import (
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
)

func TestIsPostgres(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://u:p@h/db":         true,
		"postgresql://h:5433/db":      true,
		"host=/tmp dbname=memfs":      true,
		" dbname=memfs":               true,
		"/var/lib/memfs/memfs.db":     false,
		"memfs.db":                    false,
		"/tmp/a=b/memfs.db":           false,
		"hostname=x.db":               false,
		"./postgres://not-a-url/x.db": false,
	} {
		if got := versions.IsPostgres(dsn); got != want {
			t.Errorf("IsPostgres(%q) = %v, want %v", dsn, got, want)
		}
	}
}

func TestRedactDSN(t *testing.T) {
	for _, c := range []struct{ dsn, secret string }{
		{"postgres://memfs:s3cret@db.example:5432/memfs", "s3cret"},
		{"postgresql://memfs@db/memfs?password=s3cret&sslmode=require", "s3cret"},
		{"host=db user=memfs password=s3cret dbname=memfs", "s3cret"},
		{"host=db password='s3 cret\\'x' dbname=memfs", "cret"},
		{"postgres://memfs:s3cret@db:bad port/memfs", "s3cret"},
	} {
		got := versions.RedactDSN(c.dsn)
		if strings.Contains(got, c.secret) {
			t.Errorf("RedactDSN(%q) = %q shows the password", c.dsn, got)
		}
		if !strings.Contains(got, "memfs") && !strings.HasSuffix(got, "…") {
			t.Errorf("RedactDSN(%q) = %q lost the rest", c.dsn, got)
		}
	}
	if got := versions.RedactDSN("/a/memfs.db"); got != "/a/memfs.db" {
		t.Errorf("a path changed: %q", got)
	}
}
