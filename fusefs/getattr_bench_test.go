package fusefs

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkGetattr is one GETATTR round trip through the mount: statx with
// AT_STATX_FORCE_SYNC skips the kernel's attribute cache, as the first stat
// after a write does. With -cpuprofile the profile shows the daemon's
// share, since the mount is served by the benchmark's own process.
func BenchmarkGetattr(b *testing.B) {
	_, dir := mountBenchMemfs(b)
	const files = 100
	paths := make([]string, files)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("f%03d.md", i))
		if err := os.WriteFile(paths[i], []byte("content of a small memory\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var sx unix.Statx_t
	for i := 0; b.Loop(); i++ {
		if err := unix.Statx(unix.AT_FDCWD, paths[i%files], unix.AT_STATX_FORCE_SYNC, unix.STATX_BASIC_STATS, &sx); err != nil {
			b.Fatal(err)
		}
	}
}
