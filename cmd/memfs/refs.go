package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/memfs/memfs/versions"
)

// shortIDLen is how many trailing characters of an id the log shows: the
// random end of a ULID, where the leading characters are its time and so
// alike for versions saved close together.
const shortIDLen = 8

// shortID is the end of an id, as people read and type it.
func shortID(id string) string {
	if i := strings.IndexByte(id, '_'); i >= 0 && len(id)-i-1 > shortIDLen {
		return id[len(id)-shortIDLen:]
	}
	return id
}

// backRef is "PATH~N": the version N saves before the last saved at PATH
// (its history, versions.DB.PathHistory).
var backRef = regexp.MustCompile(`^(/.*)~([0-9]+)$`)

// resolveVersion finds the version a person names: a memver_ id, the end of
// one (at least 6 characters, as the log shows them), a PATH (its memory's
// last version) or PATH~N (N versions before that).
func resolveVersion(ctx context.Context, db *versions.DB, storeID, ref string) (*versions.Version, error) {
	switch {
	case strings.HasPrefix(ref, "memver_"):
		return db.GetVersion(ctx, storeID, ref)
	case strings.HasPrefix(ref, "/"):
		path, back := ref, 0
		if m := backRef.FindStringSubmatch(ref); m != nil {
			if _, err := db.GetMemory(ctx, storeID, ref); err != nil {
				// Not a live memory named so: read the ~N.
				path = m[1]
				n, err := strconv.Atoi(m[2])
				if err != nil {
					return nil, invalidf("%s: %s is not a number of versions", ref, m[2])
				}
				back = n
			}
		}
		lineage, err := pathHistory(ctx, db, storeID, path, versions.VersionListOptions{})
		if err != nil {
			return nil, err
		}
		if back >= len(lineage) {
			return nil, &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf(
				"%s has %s, so %s names none (%s~0 is the last); see memfs log %s %s",
				path, counted(len(lineage), "version", "versions"), ref, path, storeID, path)}
		}
		return db.GetVersion(ctx, storeID, lineage[back].ID)
	}
	if err := slashless(ref); err != nil {
		return nil, err
	}
	if len(ref) < 6 || strings.ContainsAny(ref, "_/") {
		return nil, &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf(
			"no version %q in store %s: give a memver_ id, the last %d characters of one as memfs log shows them, a PATH (starting with /) or PATH~N",
			ref, storeID, shortIDLen)}
	}
	found, err := db.VersionsEndingIn(ctx, storeID, ref)
	if err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf(
			"no version of store %s ends in %q: see the ids in memfs log %s (a path must start with /)", storeID, ref, storeID)}
	case 1:
		return db.GetVersion(ctx, storeID, found[0])
	}
	return nil, invalidf("%d versions of store %s end in %q (%s, …): give more characters", len(found), storeID, ref, found[0])
}

// idLike is what an id or the end of one looks like: "memver_01…",
// "0000000Z". Anything else a person gives for a memory or a version is a
// path.
var idLike = regexp.MustCompile(`^([a-z]+_)?[0-9A-Za-z]+$`)

// slashless refuses a path given without its leading slash ("todo.md"),
// as creating a memory at it is refused, rather than looking it up as an
// id that cannot exist.
func slashless(ref string) error {
	if ref == "" || strings.HasPrefix(ref, "/") || idLike.MatchString(ref) {
		return nil
	}
	return invalidf("path %q must start with /, e.g. /%s", ref, ref)
}

// memoryRef checks a MEMORY argument: a path, or a mem_ id.
func memoryRef(ref string) error {
	if strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "mem_") {
		return nil
	}
	if err := slashless(ref); err != nil {
		return err
	}
	return invalidf("%q is neither a path (a path must start with /, e.g. /%s) nor a mem_ id", ref, ref)
}

// invalidf is an invalid-input error (exit 5).
func invalidf(format string, args ...any) error {
	return &versions.Error{Code: versions.CodeInvalid, Message: fmt.Sprintf(format, args...)}
}
