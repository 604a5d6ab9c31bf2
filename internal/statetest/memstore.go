package statetest

import "bytes"

// MemStore is a journal.Store in memory: what a store over a message
// broker looks like to a journal. Stored holds the whole lines, TornLine
// what a crash cut short after them, Syncs the Sync calls. It is not safe
// for concurrent use, as a Journal uses its store from one goroutine.
type MemStore struct {
	Stored   [][]byte
	TornLine []byte
	Syncs    int
}

// Name is "mem", so messages name line n as mem:n.
func (m *MemStore) Name() string { return "mem" }

// Lines calls fn with each stored line from from on; fn's error stops it.
func (m *MemStore) Lines(from int, fn func(int, []byte) error) error {
	for n := from; n < len(m.Stored); n++ {
		if err := fn(n, m.Stored[n]); err != nil {
			return err
		}
	}
	return nil
}

// Torn returns TornLine.
func (m *MemStore) Torn() []byte { return m.TornLine }

// Append drops TornLine and stores a copy of line.
func (m *MemStore) Append(line []byte) error {
	m.TornLine = nil
	m.Stored = append(m.Stored, bytes.Clone(line))
	return nil
}

// Flush does nothing: memory survives the process as long as it lives.
func (m *MemStore) Flush() error { return nil }

// Sync counts the call in Syncs.
func (m *MemStore) Sync() error { m.Syncs++; return nil }

// Reset drops every line.
func (m *MemStore) Reset() error { m.Stored, m.TornLine = nil, nil; return nil }

// Close does nothing.
func (m *MemStore) Close() error { return nil }
