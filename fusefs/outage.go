package fusefs

import (
	"context"
	"log/slog"
	"syscall"

	"github.com/memfs/memfs/versions"
)

// While the database cannot be reached (versions.CodeUnavailable), a mount
// answers lookups, attributes, listings and reads from what it holds (the
// index, the content cache, open buffers), and every change fails with EIO
// at once: the engine is asked each time, so the first request after the
// database is back finds it, and the watcher then catches up from its feed
// position (watch.go).

// servingCached notes that a request the engine could not answer (err) was
// answered from the mount's caches; the first one of an outage is logged.
func (s *Server) servingCached(err error) {
	if s.offline.CompareAndSwap(false, true) {
		s.log.Warn("the database cannot be reached: serving what this mount has cached; saves, creates, renames and deletes fail with EIO until it is back", "err", err)
	}
}

// reachable notes that the change feed was read again.
func (s *Server) reachable() {
	if s.offline.CompareAndSwap(true, false) {
		s.log.Info("the database is reachable again: the mount catches up with the changes made meanwhile")
	}
}

// backOnline asks the engine whether the database, seen unreachable, is
// back, as every change does during an outage: a write is refused at once
// only while it is still down, and the first one after it is back goes on.
func (s *Server) backOnline(ctx context.Context, storeID string) bool {
	if _, err := s.db.FeedHead(detach(ctx), storeID); versions.ErrorCode(err) == versions.CodeUnavailable {
		return false
	}
	s.reachable()
	return true
}

// unavailable is the EIO of a request that needed the database while it
// cannot be reached; err says where the database is and what to do.
func (s *Server) unavailable(op string, where slog.Attr, path string, err error) syscall.Errno {
	s.report(slog.LevelError, op, where, path, syscall.EIO, "failed with EIO: the database cannot be reached", "err", err)
	return syscall.EIO
}

func isUnavailable(err error) bool { return versions.ErrorCode(err) == versions.CodeUnavailable }
