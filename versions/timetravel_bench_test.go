package versions_test

import (
	"fmt"
	"testing"

	"github.com/memfs/memfs/versions"
)

// The figures of a store as of any moment, on the benchmark fixture (2,000
// memories, 100,000 versions, SQLite):
//
//	go test -run '^$' -bench 'AsOf|RestoreAsOf|UndoSession|ForkStore' -benchtime 5x ./versions/

// BenchmarkAsOfListing lists the whole store live (every page of
// ListMemories) and as of a checkpoint at its latest version, the most a
// snapshot reads.
func BenchmarkAsOfListing(b *testing.B) {
	db, f := openFixture(b)
	if _, err := db.CreateCheckpoint(ctx, f.storeID, versions.CheckpointOptions{Name: "now"}, me); err != nil {
		b.Fatal(err)
	}
	b.Run("live", func(b *testing.B) {
		cpuTimer(b)
		for range b.N {
			n, page := 0, ""
			for {
				p, err := db.ListMemories(ctx, f.storeID, versions.MemoryListOptions{Limit: versions.MaxPageSize, Page: page})
				if err != nil {
					b.Fatal(err)
				}
				n += len(p.Data)
				if p.NextPage == nil {
					break
				}
				page = *p.NextPage
			}
			if n != fixtureMemories {
				b.Fatalf("listed %d memories", n)
			}
		}
	})
	asOf := func(name string) func(b *testing.B) {
		return func(b *testing.B) {
			cpuTimer(b)
			for range b.N {
				_, files, err := db.StoreAsOf(ctx, f.storeID, name, versions.SnapshotOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if len(files) != fixtureMemories {
					b.Fatalf("listed %d memories", len(files))
				}
			}
		}
	}
	b.Run("as-of-latest", asOf("now"))
	// Every memory changed once since the checkpoint: each is read back
	// from its versions.
	for i, id := range f.ids {
		c := fmt.Sprintf("changed since %d\n", i)
		if _, err := db.UpdateMemory(ctx, f.storeID, id, versions.MemoryUpdate{Content: &c}, me); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("as-of-before-2000-changes", asOf("now"))
}

// BenchmarkRestoreAsOf restores the whole store between two checkpoints
// whose every memory differs: 2,000 changed memories each time.
func BenchmarkRestoreAsOf(b *testing.B) {
	db, f := openFixture(b)
	if _, err := db.CreateCheckpoint(ctx, f.storeID, versions.CheckpointOptions{Name: "a"}, me); err != nil {
		b.Fatal(err)
	}
	for i, id := range f.ids {
		c := fmt.Sprintf("restored side b %d\n", i)
		if _, err := db.UpdateMemory(ctx, f.storeID, id, versions.MemoryUpdate{Content: &c}, me); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.CreateCheckpoint(ctx, f.storeID, versions.CheckpointOptions{Name: "b"}, me); err != nil {
		b.Fatal(err)
	}
	cpuTimer(b)
	for i := range b.N {
		to := []string{"a", "b"}[i%2]
		p, err := db.RestoreAsOf(ctx, f.storeID, to, false, me)
		if err != nil {
			b.Fatal(err)
		}
		if p.Writes() != fixtureMemories {
			b.Fatalf("restore as of %s wrote %d versions", to, p.Writes())
		}
	}
}

// BenchmarkUndoSession undoes a session that changed 500 memories.
func BenchmarkUndoSession(b *testing.B) {
	db, f := openFixture(b)
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: f.storeID}})
		if err != nil {
			b.Fatal(err)
		}
		by := versions.SessionActor(sess.ID)
		for j := range 500 {
			c := fmt.Sprintf("session %d change %d\n", i, j)
			if _, err := db.UpdateMemory(ctx, f.storeID, f.ids[(j*4+i)%fixtureMemories], versions.MemoryUpdate{Content: &c}, by); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := db.EndSession(ctx, sess.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		p, err := db.UndoSession(ctx, f.storeID, sess.ID, versions.UndoOptions{}, me)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if p.Writes() != 500 {
			b.Fatalf("undo wrote %d versions", p.Writes())
		}
	}
}

// BenchmarkForkStore forks the store without history.
func BenchmarkForkStore(b *testing.B) {
	db, f := openFixture(b)
	cpuTimer(b)
	for i := range b.N {
		out, err := db.ForkStore(ctx, f.storeID, versions.ForkOptions{Name: fmt.Sprintf("fork %d", i)}, me)
		if err != nil {
			b.Fatal(err)
		}
		if out.Memories != fixtureMemories {
			b.Fatalf("forked %d memories", out.Memories)
		}
	}
}
