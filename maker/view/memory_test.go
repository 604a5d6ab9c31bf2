package view_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker/view"
)

// Reading a journal keeps about a byte per step, not the steps: the live
// heap after reading 2^17 steps (about 40 MB of journal) grows by less
// than 3 bytes a step (the map's cells, the sparse index, counters).
func TestReadKeepsAByteAStep(t *testing.T) {
	const steps = 1 << 17
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, `{"mdap_journal":4,"run":"0123456789abcdef0123456789abcdef","task":"hanoi:N=17","settings":{"model":"sim","k":3},"chain":"00"}`)
	for i := range steps {
		fmt.Fprintf(w, `{"step":%d,"k":3,"winner":{"value":{"move":[1,0,2],"next_state":[[17,16,15,14,13,12,11,10,9,8,7,6,5,4,3,2],[1],[]]}},"key":"b914c0f4f6f84b99","votes":{"b914c0f4f6f84b99":3,"0000000000000001":%d},"launched":4,"valid":4,"flagged":%d,"errors":0,"cancelled":0,"usage":{"input_tokens":1596,"output_tokens":84,"latency_ns":296791,"requests":4},"elapsed_ns":717598,"chain":"df4876c71ef487a0ce598eb87d7890a3846dbdf0e017fae74df763d6723c0e11"}`+"\n", i, i%2, i%3/2)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	j, err := view.OpenFile(path)
	require.NoError(t, err)
	defer j.Close()
	_, err = j.Read()
	require.NoError(t, err)
	took := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := j.Run().Stats()
	require.Equal(t, steps, st.Steps)
	assert.Equal(t, steps/3, st.Flagged)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d steps read in %s; the live heap grew by %d bytes", steps, took, grew)
	assert.Less(t, grew, int64(3*steps), "the view keeps what it read")
	runtime.KeepAlive(j)
}
