package versions

import (
	"context"
	"sync"
)

// Positions are the feed positions (Change.Seq) of the directory and store
// changes one write recorded, so that the writer tells its own changes
// from others' when the feed brings them back, exactly and with no time
// window. Memory changes carry theirs already (Memory.Seq,
// Memory.ReplacedSeq, MemoryDelete.Seq).
type Positions struct {
	mu   sync.Mutex
	seqs []int64
}

type positionsKey struct{}

// WithPositions returns a context whose write records its directory
// changes' positions in the Positions returned.
func WithPositions(ctx context.Context) (context.Context, *Positions) {
	p := &Positions{}
	return context.WithValue(ctx, positionsKey{}, p), p
}

// Seqs are the positions the write committed.
func (p *Positions) Seqs() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int64(nil), p.seqs...)
}

func positionsOf(ctx context.Context) *Positions {
	if ctx == nil {
		return nil
	}
	p, _ := ctx.Value(positionsKey{}).(*Positions)
	return p
}

func (p *Positions) add(seq int64) {
	p.mu.Lock()
	p.seqs = append(p.seqs, seq)
	p.mu.Unlock()
}

func (p *Positions) reset() {
	p.mu.Lock()
	p.seqs = p.seqs[:0]
	p.mu.Unlock()
}
