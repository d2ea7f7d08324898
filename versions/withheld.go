package versions

import "github.com/memfs/memfs/guard"

// The history views withhold a credential until it is redacted.
//
// A credential that a store whose guard warns (or a store whose guard was
// off, or an import) kept stays in the version that holds it after the
// memory is cleaned, until `memfs version redact` empties that version.
// The views an agent or a passer-by browses history with — the mount's
// .history tree and its as-of trees, the web pages, search --history —
// do not show that content in the meantime: WithheldFromHistory is their
// one rule. The API and the CLI (version get, export, diff) still show
// it, so that an operator can see what to redact; memfs scan lists it.

// WithheldReason is what a view says in place of withheld content.
const WithheldReason = "withheld: the credential guard finds a credential in this version; redact it (memfs version redact STORE VERSION) or read it with memfs version get"

// WithheldFromHistory reports whether the history views must withhold the
// content of v, a version of a store whose guard is policy: it still holds
// content (not redacted, not a deletion) and the guard finds a credential
// in it. A store whose guard is off withholds nothing. v.Content must be
// loaded; a version read without its content is never withheld, so a view
// that lists names and sizes only decides when it reads the content.
func WithheldFromHistory(policy GuardPolicy, v *Version) bool {
	if policy == guard.Off || v == nil || v.RedactedAt != nil || v.Content == nil || *v.Content == "" {
		return false
	}
	return len(guard.Scan(*v.Content)) > 0
}
