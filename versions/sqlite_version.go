package versions

import sqlite3 "github.com/mattn/go-sqlite3"

// SQLiteVersion is the version of the SQLite library linked into this
// binary, for memfs --version and bug reports.
func SQLiteVersion() string {
	v, _, _ := sqlite3.Version()
	return v
}
