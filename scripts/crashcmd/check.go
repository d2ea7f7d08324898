package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/memfs/memfs/versions"
)

// integrityCheck runs PRAGMA integrity_check on a read-only connection, so
// the checker cannot repair or hide what the crash left behind.
func integrityCheck(dbPath string) error {
	dsn := "file:" + (&url.URL{Path: dbPath}).EscapedPath() + "?mode=ro"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return fmt.Errorf("open %s read-only: %w", dbPath, err)
	}
	defer db.Close()
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity_check of %s: %w", dbPath, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("integrity_check of %s: %w", dbPath, err)
		}
		problems = append(problems, line)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity_check of %s: %w", dbPath, err)
	}
	if len(problems) != 1 || problems[0] != "ok" {
		return fmt.Errorf("integrity_check of %s: %s", dbPath, strings.Join(problems, "; "))
	}
	return nil
}

// ack is one save a writer saw succeed.
type ack struct {
	ID     string
	SHA256 string
}

// readAcks reads every acknowledgement log in dir matching pattern.
func readAcks(dir, pattern string) ([]ack, error) {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, err
	}
	var acks []ack
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// A writer fsyncs each line before counting it, but one killed
			// mid-line leaves a fragment that was never acknowledged.
			if len(fields) != 2 || len(fields[1]) != 64 {
				continue
			}
			acks = append(acks, ack{fields[0], fields[1]})
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
	return acks, nil
}

// verdict is what one check of the database found.
type verdict struct {
	Versions  int      // versions examined
	Lost      []string // acknowledged saves with no version holding their content
	Failures  []string // integrity_check problems, torn or mismatched versions
	Integrity bool     // integrity_check said ok
}

// checkVersions examines the versions of storeID created at or after since
// (zero: all) and the acknowledgements: every acknowledged content must be
// a version, every version's sha256 must match its content, and every
// content must be one complete payload.
func checkVersions(ctx context.Context, dbPath, storeID string, since time.Time, acks []ack) (verdict, error) {
	var v verdict
	if err := integrityCheck(dbPath); err != nil {
		v.Failures = append(v.Failures, err.Error())
	} else {
		v.Integrity = true
	}
	db, err := versions.Open(dbPath, versions.Options{})
	if err != nil {
		return v, fmt.Errorf("open %s: %w", dbPath, err)
	}
	defer db.Close()

	have := map[string]bool{}
	examine := func(ver *versions.Version) {
		v.Versions++
		if ver.Content == nil {
			return // a deletion
		}
		content := *ver.Content
		sum := sha256Hex(content)
		if ver.ContentSHA256 == nil || *ver.ContentSHA256 != sum {
			v.Failures = append(v.Failures, fmt.Sprintf("version %s: content_sha256 %v does not match its content (%s)", ver.ID, deref(ver.ContentSHA256), sum))
		}
		if _, err := parsePayload(content); err != nil {
			v.Failures = append(v.Failures, fmt.Sprintf("version %s (%s): %v", ver.ID, deref(ver.Path), err))
		}
		have[sum] = true
	}
	if since.IsZero() {
		err = db.Export(ctx, storeID, func(x any) error {
			switch x := x.(type) {
			case versions.Version:
				examine(&x)
			case *versions.Version:
				examine(x)
			case versions.Memory:
				v.Failures = append(v.Failures, checkLive(&x)...)
			case *versions.Memory:
				v.Failures = append(v.Failures, checkLive(x)...)
			}
			return nil
		})
	} else {
		err = listSince(ctx, db, storeID, since, examine)
	}
	if err != nil {
		return v, err
	}
	// A save is final at its close: every acknowledged one is a version,
	// a new file's first save included.
	for _, a := range acks {
		if !have[a.SHA256] {
			v.Lost = append(v.Lost, fmt.Sprintf("save %s (sha256 %s) was acknowledged but is not a version", a.ID, a.SHA256))
		}
	}
	return v, nil
}

// checkLive checks that a live memory holds one complete save.
func checkLive(m *versions.Memory) []string {
	if m.Content == nil {
		return []string{fmt.Sprintf("memory %s (%s): export has no content", m.ID, m.Path)}
	}
	var bad []string
	if sum := sha256Hex(*m.Content); sum != m.ContentSHA256 {
		bad = append(bad, fmt.Sprintf("memory %s (%s): content_sha256 %s does not match its content (%s)", m.ID, m.Path, m.ContentSHA256, sum))
	}
	if _, err := parsePayload(*m.Content); err != nil {
		bad = append(bad, fmt.Sprintf("memory %s (%s): %v", m.ID, m.Path, err))
	}
	return bad
}

func listSince(ctx context.Context, db *versions.DB, storeID string, since time.Time, fn func(*versions.Version)) error {
	opts := versions.VersionListOptions{CreatedGTE: since, View: versions.ViewFull, Limit: versions.MaxFullViewPage}
	for {
		page, err := db.ListVersions(ctx, storeID, opts)
		if err != nil {
			return fmt.Errorf("list versions: %w", err)
		}
		for i := range page.Data {
			fn(&page.Data[i])
		}
		if page.NextPage == nil {
			return nil
		}
		opts.Page = *page.NextPage
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}
