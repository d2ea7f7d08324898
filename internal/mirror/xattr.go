package mirror

import (
	"context"

	"github.com/memfs/memfs/versions"
)

// Xattr is the user.memfs.NAME attribute of memory memID, as its head
// has it: its id, version, sha256 or writer (nil: no such attribute). The
// memory at path is asked first, the memory by id when it moved.
func (g Engine) Xattr(ctx context.Context, memID, path, name string) (*string, error) {
	var m *versions.Memory
	if e, err := g.DB.Stat(ctx, g.Store, path); err == nil && e.Memory != nil && e.Memory.ID == memID {
		m = e.Memory
	} else if m, err = g.DB.GetMemory(ctx, g.Store, memID); err != nil {
		return nil, err
	}
	var v string
	switch name {
	case "id":
		v = m.ID
	case "version":
		v = m.VersionID
	case "sha256":
		v = m.ContentSHA256
	case "writer":
		ver, err := g.DB.GetVersion(ctx, g.Store, m.VersionID)
		if err != nil {
			return nil, err
		}
		if ver.CreatedBy != nil {
			v = ver.CreatedBy.Type + ":" + ver.CreatedBy.ID
		}
	default:
		return nil, nil
	}
	return &v, nil
}
