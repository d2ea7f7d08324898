package mirror

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Run applies e and carries its plan out as far as the engine goes: each
// request through eng.Execute and its answer back to Apply (and e again
// after an answer that asks for it). each is given every plan, for the
// rest: the kernel's answer, notifications, timers. ids are the files
// whose lock Run holds throughout (the per-file order of engine calls); a
// request for another file takes that file's lock and decides again
// under it. It returns the last plan, with the first plan's answers to
// the kernel's request (its file, handle, attributes, data).
func (m *Mirror) Run(ctx context.Context, eng Engine, e Event, each func(Plan), ids ...ID) Plan {
	var held []ID // the files whose locks are held, each with its unlock
	var unlocks []func()
	unlockAll := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
		unlocks = nil
	}
	defer unlockAll()
	// relock takes the locks held and those of ids again, in ascending
	// order (see doc.go: no two requests wait for each other).
	relock := func(ids ...ID) {
		unlockAll()
		for _, id := range ids {
			if id != 0 && !slices.Contains(held, id) {
				held = append(held, id)
			}
		}
		slices.Sort(held)
		for _, id := range held {
			unlocks = append(unlocks, m.Lock(id))
		}
	}
	relock(ids...)
	p := m.Apply(e)
	first := p
	for {
		if r := p.Ask; r != nil && r.File != 0 && !slices.Contains(held, r.File) {
			if unlock, ok := m.lockFile(r.File, true); ok {
				held, unlocks = append(held, r.File), append(unlocks, unlock)
			} else {
				relock(r.File)
			}
			p = m.Apply(e)
			first = p
			continue
		}
		each(p)
		if p.Ask == nil {
			break
		}
		again := p.Again
		var a Answered
		a, p = m.ask(ctx, eng, *p.Ask)
		if again && a.Err == nil && p.Errno == 0 && p.Err == nil {
			each(p)
			p = m.Apply(e)
			first = p
		}
	}
	if first.File != 0 {
		p.File, p.Ino, p.Handle = first.File, first.Ino, first.Handle
	}
	if p.Attr == nil {
		p.Attr = first.Attr
	}
	if p.Data == nil {
		p.Data = first.Data
	}
	p.KeepCache, p.DirectIO = first.KeepCache, first.DirectIO
	return p
}

// ask carries r to the engine and applies its answer. r is in flight
// until then, and no longer once either has panicked (a bug, answered
// with EIO): changes the feed brings would wait for it for ever.
func (m *Mirror) ask(ctx context.Context, eng Engine, r Request) (Answered, Plan) {
	defer m.inflight.end(m.inflight.begin(r))
	a := eng.Execute(ctx, r)
	return a, m.Apply(a)
}

// Timers runs the timers plans set: each ends by calling fire with its
// event, unless stopped first.
type Timers struct {
	mu   sync.Mutex
	on   map[Event]*time.Timer
	wg   sync.WaitGroup
	fire func(Event)
}

// NewTimers returns timers that end with fire.
func NewTimers(fire func(Event)) *Timers {
	return &Timers{on: map[Event]*time.Timer{}, fire: fire}
}

// Set sets or stops the timer of t.Event.
func (ts *Timers) Set(t Timer) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if old, ok := ts.on[t.Event]; ok {
		if old.Stop() {
			ts.wg.Done()
		}
		delete(ts.on, t.Event)
	}
	if t.Stop {
		return
	}
	ts.wg.Add(1)
	var tm *time.Timer
	tm = time.AfterFunc(t.After, func() {
		defer ts.wg.Done()
		ts.mu.Lock()
		if ts.on[t.Event] == tm {
			delete(ts.on, t.Event)
		}
		ts.mu.Unlock()
		ts.fire(t.Event)
	})
	ts.on[t.Event] = tm
}

// Stop stops every timer and waits for those already running.
func (ts *Timers) Stop() {
	ts.mu.Lock()
	for ev, t := range ts.on {
		if t.Stop() {
			ts.wg.Done()
		}
		delete(ts.on, ev)
	}
	ts.mu.Unlock()
	ts.wg.Wait()
}
