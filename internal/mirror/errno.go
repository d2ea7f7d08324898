package mirror

import (
	"syscall"

	"github.com/memfs/memfs/versions"
)

// CodeErrno is the errno a mount answers for an engine error of code c.
func CodeErrno(c versions.Code) syscall.Errno {
	switch c {
	case versions.CodeNotFound:
		return syscall.ENOENT
	case versions.CodePathConflict:
		return syscall.EEXIST
	case versions.CodePreconditionFailed, versions.CodeStale:
		return syscall.ESTALE
	case versions.CodeReadOnly:
		return syscall.EROFS
	case versions.CodeStoreFull:
		return syscall.ENOSPC
	case versions.CodeTooLarge:
		return syscall.EFBIG
	case versions.CodeOverQuota:
		return syscall.EDQUOT
	case versions.CodeCredential:
		return syscall.EACCES // the store's credential guard refused the content
	case versions.CodeNameTooLong:
		return syscall.ENAMETOOLONG
	case versions.CodeInvalid:
		return syscall.EINVAL
	case versions.CodeNotUTF8:
		return syscall.EILSEQ
	case versions.CodeNotEmpty:
		return syscall.ENOTEMPTY
	case versions.CodeIsDir:
		return syscall.EISDIR
	case versions.CodeNotDir:
		return syscall.ENOTDIR
	case versions.CodeConflict:
		return syscall.EBUSY
	}
	return syscall.EIO
}
