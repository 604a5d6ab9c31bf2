package models

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// scriptedReader gives its data in the chunks its script says, some
// reads returning nothing (0, nil), the last chunk with io.EOF or
// another error, or that error on a read of its own.
type scriptedReader struct {
	data  []byte
	sizes []int // each read's size; 0 is an empty read
	end   error // returned with the last data, or after it
	with  bool  // end comes with the last data
	i     int
}

func (s *scriptedReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, s.end
	}
	n := len(s.data)
	if s.i < len(s.sizes) {
		n = min(n, s.sizes[s.i])
		s.i++
	}
	n = copy(p, s.data[:n])
	s.data = s.data[n:]
	if len(s.data) == 0 && s.with {
		return n, s.end
	}
	return n, nil
}

// TestReadReplyIsLimitReadersForAnyReads: for readers that give their
// bytes in any chunks (empty reads among them), end with io.EOF or an
// error, with the last data or apart, and limits around the data's
// length (exactly it, one under, one over), readReply leaves in buf and
// returns what buf.ReadFrom(io.LimitReader(r, limit)) does, buf holding
// bytes before the read or not.
func TestReadReplyIsLimitReadersForAnyReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cut := errors.New("cut")
	for range 3000 {
		data := make([]byte, rng.IntN(3000))
		for i := range data {
			data[i] = byte('a' + rng.IntN(26))
		}
		var sizes []int
		for range rng.IntN(20) {
			sizes = append(sizes, rng.IntN(700))
		}
		end := io.EOF
		if rng.IntN(3) == 0 {
			end = cut
		}
		with := rng.IntN(2) == 0
		prefix := []byte(nil)
		if rng.IntN(3) == 0 {
			prefix = bytes.Repeat([]byte("p"), 1+rng.IntN(600))
		}
		limit := []int{0, len(data) - 1, len(data), len(data) + 1, rng.IntN(len(data) + 2)}[rng.IntN(5)]
		limit = max(limit, 0)
		got, want := bytes.NewBuffer(bytes.Clone(prefix)), bytes.NewBuffer(bytes.Clone(prefix))
		gotErr := readReply(got, &scriptedReader{data: data, sizes: sizes, end: end, with: with}, limit)
		_, wantErr := want.ReadFrom(io.LimitReader(&scriptedReader{data: data, sizes: sizes, end: end, with: with}, int64(limit)))
		if !assert.Equal(t, want.String(), got.String(), "len %d, limit %d, prefix %d, sizes %v, end %v with data %v", len(data), limit, len(prefix), sizes, end, with) ||
			!assert.Equal(t, wantErr, gotErr, "len %d, limit %d, prefix %d, sizes %v, end %v with data %v", len(data), limit, len(prefix), sizes, end, with) {
			return
		}
	}
}
