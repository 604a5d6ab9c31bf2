package vote

// board counts votes per key and keeps the two highest counts up to date, so
// that the lead of the top key over every other key costs O(1) per vote.
type board struct {
	k      int
	votes  map[uint64]int
	top    uint64 // the key with the most votes (any of them on a tie)
	first  int    // votes of top
	second int    // the most votes of any key other than top
}

// add counts one vote for key and reports whether some key now leads every
// other key by at least k.
func (b *board) add(key uint64) bool {
	if b.votes == nil {
		b.votes = make(map[uint64]int, 4)
	}
	n := b.votes[key] + 1
	b.votes[key] = n
	switch {
	case n > b.first:
		// key had first votes at most: it is now the only top key, and
		// the old top (if another key) is the best of the rest.
		if key != b.top {
			b.second = b.first
			b.top = key
		}
		b.first = n
	case n > b.second:
		// key != top here: a vote for top always lands in the case above.
		b.second = n
	}
	return b.decided()
}

// lead is the top key's margin over the best other key (0 on a tie).
func (b *board) lead() int { return b.first - b.second }

// decided reports whether the top key leads by k.
func (b *board) decided() bool { return b.first-b.second >= b.k }

// need is the number of further votes the leader needs to win: k - lead.
func (b *board) need() int { return b.k - b.lead() }

// slot holds one launched sample until it is committed.
type slot[T any] struct {
	s    Sample[T]
	done bool
}

// window is a FIFO ring of the launched but not yet committed samples; its
// front is the lowest uncommitted index.
type window[T any] struct {
	buf  []slot[T] // len is 0 or a power of two
	head int
	n    int
}

func (w *window[T]) push() {
	if w.n == len(w.buf) {
		buf := make([]slot[T], max(4, 2*len(w.buf)))
		for j := range w.n {
			buf[j] = *w.at(j)
		}
		w.buf, w.head = buf, 0
	}
	w.n++
	*w.at(w.n - 1) = slot[T]{}
}

// at is the j-th slot from the front (j < n, or j == n < len(buf)).
func (w *window[T]) at(j int) *slot[T] {
	return &w.buf[(w.head+j)&(len(w.buf)-1)]
}

func (w *window[T]) pop() Sample[T] {
	sl := w.at(0)
	s := sl.s
	*sl = slot[T]{}
	w.head = (w.head + 1) & (len(w.buf) - 1)
	w.n--
	return s
}
