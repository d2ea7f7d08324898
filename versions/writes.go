package versions

// Writes is how many write transactions this handle committed: a test
// counts the commits an operation costs.
func (db *DB) Writes() int64 { return db.writes.Load() }
