package versions

import "strings"

// An attachment's write prefix makes it writable only below one folder of
// the store ("/projects/p1/"), as an app's memory lets a conversation in a
// project read the whole account's memory but write only its project's
// folder. Every surface a session writes through (its mount, the memory
// tool acting for it, the HTTP API acting as it) asks Writable before a
// change; a rename must be writable at both ends, so that nothing moves
// into or out of the folder.

// checkWritePrefix refuses a prefix that is not a folder path ("/a/b/") or
// one given with read_only access, where it would mean nothing.
func checkWritePrefix(a AttachmentParams) error {
	p := a.WritePrefix
	if p == "" {
		return nil
	}
	if !strings.HasPrefix(p, "/") || !strings.HasSuffix(p, "/") || p == "/" {
		return errorf(CodeInvalid, "write prefix %q for store %s is not a folder such as /projects/p1/: start and end it with /", p, a.StoreID)
	}
	if err := ValidatePath(strings.TrimSuffix(p, "/")); err != nil {
		return errorf(CodeInvalid, "write prefix %q for store %s: %v", p, a.StoreID, err)
	}
	if a.Access == ReadOnly {
		return errorf(CodeInvalid, "store %s is attached read_only and given a write prefix %q: a read_only attachment writes nothing; drop one of them", a.StoreID, p)
	}
	return nil
}

// Attachment is the session's attachment of the store, if it attaches it:
// what every surface acting as the session holds its writes to.
func (s *Session) Attachment(storeID string) (Attachment, bool) {
	for _, a := range s.Resources {
		if a.StoreID == storeID {
			return a, true
		}
	}
	return Attachment{}, false
}

// Writable reports whether the attachment lets its session change what is
// at path: its access is read_write and path is within its write prefix,
// if it has one (the prefix's own folder included).
func (a Attachment) Writable(path string) bool {
	if a.Access == ReadOnly {
		return false
	}
	return a.WritePrefix == "" || strings.HasPrefix(path+"/", a.WritePrefix)
}

// OnWritePath reports whether path is within the write prefix or one of
// the folders above it, which a session may make (mkdir -p) to reach it.
func (a Attachment) OnWritePath(path string) bool {
	return a.Writable(path) || a.Access != ReadOnly && strings.HasPrefix(a.WritePrefix, path+"/")
}
