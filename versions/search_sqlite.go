package versions

import (
	"database/sql"

	"github.com/mattn/go-sqlite3"

	"github.com/memfs/memfs/fulltext"
)

// sqliteDriver is mattn's driver with the functions memfs's schema calls
// registered on every connection: the search index's triggers fold text
// with memfs_search_fold (migrations/sqlite/0020_search.sql), and the
// triggers that move a memory's head name the new version with
// memfs_version_id (0023_lean_saves.sql), so a connection that writes
// versions needs them.
const sqliteDriver = "sqlite3_memfs"

func init() {
	sql.Register(sqliteDriver, &sqlite3.SQLiteDriver{
		ConnectHook: func(c *sqlite3.SQLiteConn) error {
			if err := c.RegisterFunc("memfs_search_fold", foldForIndex, true); err != nil {
				return err
			}
			return c.RegisterFunc("memfs_version_id", versionID, true)
		},
	})
}

// foldForIndex is fulltext.Fold for SQLite, where a NULL path or content
// arrives as nil.
func foldForIndex(s any) string {
	switch v := s.(type) {
	case string:
		return fulltext.Fold(v)
	case []byte:
		return fulltext.Fold(string(v))
	}
	return ""
}
