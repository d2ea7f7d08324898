package versions

import (
	"net/url"
	"regexp"
	"strings"
)

// IsPostgres reports whether dsn names a PostgreSQL database: a
// postgres:// or postgresql:// URL, or a libpq keyword DSN (host=…
// dbname=…). Anything else is a SQLite file's path.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") || keywordDSN.MatchString(dsn)
}

// keywordDSN matches the start of a libpq keyword DSN by its first
// keyword, so that a file path holding an '=' stays a path.
var keywordDSN = regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|passfile|sslmode|sslrootcert|sslcert|sslkey|service|application_name|connect_timeout|options|target_session_attrs)\s*=`)

// RedactDSN is dsn safe to print or log: a PostgreSQL password, in the
// URL's user information, its query or a keyword DSN, becomes "xxxxx".
// A SQLite path is returned as it is.
func RedactDSN(dsn string) string {
	switch {
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		u, err := url.Parse(dsn)
		if err != nil {
			// Unparsable: show the scheme only rather than guess where a
			// password ends.
			return dsn[:strings.Index(dsn, "://")+3] + "…"
		}
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		if q := u.Query(); q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	case keywordDSN.MatchString(dsn):
		return keywordPassword.ReplaceAllString(dsn, "${1}xxxxx")
	}
	return dsn
}

// keywordPassword matches a password's value in a keyword DSN, quoted (with
// backslash escapes) or not.
var keywordPassword = regexp.MustCompile(`(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s]*)`)
