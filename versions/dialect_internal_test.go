package versions

import "testing"

func TestRebind(t *testing.T) {
	for _, c := range []struct {
		d      *dialect
		q, out string
	}{
		{sqliteDialect, "SELECT seq FROM versions WHERE memory_id = ? AND path <> '?' ORDER BY seq LIMIT ?", "SELECT seq FROM versions WHERE memory_id = +? AND path <> '?' ORDER BY seq LIMIT +?"},
		{sqliteDialect, "SELECT 1 FROM json_each(?7) ORDER BY seq DESC LIMIT ?12", "SELECT 1 FROM json_each(+?7) ORDER BY seq DESC LIMIT +?12"},
		{sqliteDialect, "SELECT path FROM versions LIMIT 1", "SELECT path FROM versions LIMIT 1"},
		{postgresDialect, "SELECT 1 WHERE a = ? AND b = '?' LIMIT ?", "SELECT 1 WHERE a = $1 AND b = '?' LIMIT $2"},
		{postgresDialect, "SELECT 1 WHERE a = ?2 LIMIT ?7", "SELECT 1 WHERE a = $2 LIMIT $7"},
	} {
		if got := c.d.rebind(c.q); got != c.out {
			t.Errorf("%s rebind(%q) = %q, want %q", c.d.name, c.q, got, c.out)
		}
	}
}
