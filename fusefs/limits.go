package fusefs

import "time"

// DefaultGrace is how long a file with a temporary name stays pending, and
// a renamed-away file held, before the store records it.
const DefaultGrace = 500 * time.Millisecond

// Settle is how long a closed new file with a temporary name waits for the
// rename an atomic saver makes next before its pending row is written: a
// rename within it saves the content over its target in one commit. A
// daemon killed meanwhile loses that file, as it would an atomic save cut
// short; the target keeps its version.
const Settle = 100 * time.Millisecond

// DefaultMaxUnsavedBytes bounds the content a mount holds that is not a
// saved version: open write buffers, files unlinked while still open and
// scratch files. Without a bound, processes holding many open buffers
// grow the daemon without limit.
const DefaultMaxUnsavedBytes = 64 << 20

// DefaultMaxScratchFiles bounds the scratch files one mount holds, over
// all its stores. A scratch file lives only in the daemon's memory: its
// bytes count toward the mount's unsaved budget, and this bounds the files
// themselves, which cost memory when empty too. An editor makes one or two
// per file it has open, and leaves a backup behind per file it saved.
const DefaultMaxScratchFiles = 4096
