package fusefs

import (
	"errors"
	"log/slog"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/internal/ratelog"
	"github.com/memfs/memfs/versions"
)

// errnoOf is the one translation of engine errors into errnos. An agent
// only sees the errno, so every refusal is also logged with the store, the
// path in it and the engine's message, which says what to do; anything
// unexpected becomes EIO and is logged as an error. The log is
// rate-limited per kind of refusal (internal/ratelog); the Observer counts
// every one.
func (sm *storeMount) errnoOf(op, path string, err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
	case isUnavailable(err):
		return sm.srv.unavailable(op, sm.where(), path, err)
	default:
		errno = mirror.CodeErrno(versions.ErrorCode(err))
	}
	switch {
	case errno == syscall.EIO:
		sm.srv.report(slog.LevelError, op, sm.where(), path, errno, "internal error", "err", err)
	case errno == syscall.ENOENT && (op == "lookup" || op == "stat"):
		// a miss, not a refusal
	default:
		sm.srv.report(slog.LevelWarn, op, sm.where(), path, errno, "refused", "errno", errnoName(errno), "reason", err.Error())
	}
	return errno
}

// refuse logs a refusal decided by the mount itself (not by the engine).
func (sm *storeMount) refuse(op, path string, errno syscall.Errno, reason string) syscall.Errno {
	return sm.srv.refuseAt(op, sm.where(), path, errno, reason)
}

// where names the store in a log line: paths are the store's.
func (sm *storeMount) where() slog.Attr { return slog.String("store", sm.slug) }

// refuse logs a refusal in the mount root, whose paths are store names.
func (s *Server) refuse(op, path string, errno syscall.Errno, reason string) syscall.Errno {
	return s.refuseAt(op, slog.String("store", "(the mount root)"), path, errno, reason)
}

func (s *Server) refuseAt(op string, where slog.Attr, path string, errno syscall.Errno, reason string) syscall.Errno {
	s.report(slog.LevelWarn, op, where, path, errno, "refused", "errno", errnoName(errno), "reason", reason)
	return errno
}

// report counts a request answered with errno and logs it, rate-limited
// per kind (internal/ratelog).
func (s *Server) report(level slog.Level, op string, where slog.Attr, path string, errno syscall.Errno, msg string, attrs ...any) {
	s.opts.Observer.Refused(errno)
	s.refusals.Log(s.log, level, ratelog.Kind{Op: op, Errno: errno, Store: where.Value.String()}, msg, append([]any{"op", op, where, "path", guard.NameShown(path)}, attrs...)...)
}

// errnoName is the symbolic name of an errno for logs ("EROFS"), which is
// what an operator greps for.
func errnoName(e syscall.Errno) string {
	if name := unix.ErrnoName(e); name != "" {
		return name
	}
	return e.Error()
}
