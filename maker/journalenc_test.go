package maker

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/require"
)

// randomString mixes plain text, every ASCII control and HTML byte,
// multi-byte runes, U+2028/9 and invalid UTF-8.
func randomString(rng *rand.Rand) string {
	pieces := []string{"a", "move", " ", "\"", "\\", "<", ">", "&", "\u2028", "\u2029", "é", "日本", "\xff", "\xc3", "\x7f", "😀"}
	var b strings.Builder
	for range rng.IntN(12) {
		if rng.IntN(4) == 0 {
			b.WriteByte(byte(rng.IntN(0x20)))
			continue
		}
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

func randomValue(rng *rand.Rand, depth int) any {
	switch n := rng.IntN(10); {
	case depth > 3 || n < 2:
		return json.Number(strconv.Itoa(rng.IntN(2000) - 1000))
	case n == 2:
		return randomString(rng)
	case n == 3:
		return rng.IntN(2) == 0
	case n == 4:
		return nil
	case n == 5:
		return rng.Float64() * 1e6
	case n == 6:
		return json.Number("1.5e3")
	case n == 7:
		m := map[string]any{}
		for range rng.IntN(4) {
			m[randomString(rng)] = randomValue(rng, depth+1)
		}
		return m
	default:
		var l []any
		if rng.IntN(5) > 0 {
			l = []any{}
		}
		for range rng.IntN(4) {
			l = append(l, randomValue(rng, depth+1))
		}
		return l
	}
}

func randomRecord(rng *rand.Rand) *StepRecord {
	rec := &StepRecord{
		Step: rng.IntN(1 << 20), Pending: rng.IntN(4) == 0, K: 1 + rng.IntN(5),
		Key:     strconv.FormatUint(rng.Uint64(), 16),
		Counts:  vote.Counts{Launched: rng.IntN(9), Valid: rng.IntN(9), Flagged: rng.IntN(3), Errors: rng.IntN(3), Cancelled: rng.IntN(3)},
		Usage:   vote.Usage{InputTokens: rng.IntN(1e6), OutputTokens: rng.IntN(1e4), Latency: time.Duration(rng.Int64N(1e10)), CachedInputTokens: rng.IntN(3) * 100, CacheWriteTokens: rng.IntN(2) * 50, Requests: rng.IntN(3)},
		Elapsed: time.Duration(rng.Int64N(1e10)),
	}
	if rng.IntN(6) > 0 {
		rec.Winner.Value = randomValue(rng, 0)
	}
	if rng.IntN(5) == 0 {
		rec.Winner.Intent = &intent.ToolIntent{Tool: "read_file", Args: map[string]any{"path": randomString(rng)}, Rationale: randomString(rng)}
	}
	if rng.IntN(6) > 0 {
		rec.Votes = map[string]int{}
		for range rng.IntN(4) {
			rec.Votes[strconv.FormatUint(rng.Uint64(), 16)] = rng.IntN(9)
		}
	}
	if rng.IntN(2) == 0 {
		rec.Flags = map[string]int{"cut off": 1, randomString(rng): 2}
	}
	for range rng.IntN(3) {
		rec.Models = append(rec.Models, ModelStep{Counts: vote.Counts{Launched: rng.IntN(5), Valid: 1}, WinnerVotes: rng.IntN(4), Usage: vote.Usage{InputTokens: 3}})
	}
	if rng.IntN(4) == 0 {
		rec.Observation = &intent.Observation{Tool: "read_file", Status: intent.StatusOK, Content: randomString(rng), Duration: time.Millisecond}
		rec.ObservationDigest = digest(rec.Observation)
	}
	return rec
}

// TestAppendStepRecordMatchesMarshal: the hand-written journal line is
// byte for byte json.Marshal's, over random records whose strings hold
// every byte class encoding/json escapes.
func TestAppendStepRecordMatchesMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		rec := randomRecord(rng)
		want, err := json.Marshal(rec)
		require.NoError(t, err)
		got, err := appendStepRecord(nil, rec)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "record %d", i)
	}
}

func TestAppendStepRecordUnmarshalable(t *testing.T) {
	_, err := appendStepRecord(nil, &StepRecord{Winner: intent.Output{Value: map[string]any{"f": func() {}}}})
	require.Error(t, err)
}

// BenchmarkJournalEncode compares encoding a Hanoi-like step record with
// json.Marshal ("reflect", before) and by hand ("appender", now),
// alternately in one run.
func BenchmarkJournalEncode(b *testing.B) {
	num := func(x int) any { return json.Number(strconv.Itoa(x)) }
	rec := &StepRecord{Step: 123456, K: 3, Key: "9f86d081884c7d65",
		Winner: intent.Output{Value: map[string]any{
			"move":       []any{num(1), num(0), num(2)},
			"next_state": []any{[]any{num(20), num(19), num(18), num(17), num(16), num(15), num(14), num(13)}, []any{num(12), num(11), num(10), num(9), num(8), num(7)}, []any{num(6), num(5), num(4), num(3), num(2), num(1)}},
		}},
		Votes:  map[string]int{"9f86d081884c7d65": 3},
		Counts: vote.Counts{Launched: 3, Valid: 3},
		Usage:  vote.Usage{InputTokens: 1800, OutputTokens: 60, Latency: 12345},
	}
	for range 2 {
		b.Run("reflect", func(b *testing.B) {
			b.ReportAllocs()
			cpuLoop(b, func() {
				if _, err := json.Marshal(rec); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run("appender", func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 512)
			cpuLoop(b, func() {
				var err error
				if buf, err = appendStepRecord(buf[:0], rec); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// FuzzAppendStepRecord: for any JSON answer (decoded with numbers kept as
// json.Number, as DecodeReply does, and as float64) in a random record,
// the hand-written line is json.Marshal's, byte for byte.
func FuzzAppendStepRecord(f *testing.F) {
	for _, s := range []string{`{"move":[1,0,2],"next_state":[[3,2],[],[1]]}`, `{"a":1,"b":{"c":[true,null,"x<y>&\u2028"]},"d":-0,"e":1.5e3,"f":01}`,
		`[1,2,3]`, `"\ufffd\u0007"`, `{"z":1,"y":2,"x":3,"w":4,"v":5,"u":6,"t":7,"s":8,"r":9}`, `{"":0,"a":-12,"b":100}`} {
		f.Add(uint64(1), s)
	}
	f.Fuzz(func(t *testing.T, seed uint64, text string) {
		rng := rand.New(rand.NewPCG(seed, seed>>1))
		rec := randomRecord(rng)
		for _, numbers := range []bool{true, false} {
			d := json.NewDecoder(strings.NewReader(text))
			if numbers {
				d.UseNumber()
			}
			var v any
			if d.Decode(&v) != nil {
				return
			}
			rec.Winner.Value = v
			want, err := json.Marshal(rec)
			got, gerr := appendStepRecord(nil, rec)
			if err != nil {
				require.Error(t, gerr)
				continue
			}
			require.NoError(t, gerr)
			require.Equal(t, string(want), string(got))
		}
	})
}

// TestAppendNumberEdges: numbers of one and two characters, and those the
// fast path must leave to json.Marshal (a leading zero, a sign, a
// fraction, an exponent, not a number), in lists, objects and alone,
// come out as json.Marshal writes them, or fail as it does.
func TestAppendNumberEdges(t *testing.T) {
	for _, n := range []string{"0", "7", "9", "10", "99", "00", "01", "0a", "a0", "-", "-0", "-7", "-10", "1.", ".1", "1e2", "1E2", "+1", "", " 1", "123", "1a", "x"} {
		for _, v := range []any{json.Number(n), []any{json.Number(n)}, []any{json.Number("1"), json.Number(n)}, map[string]any{"a": json.Number(n), "b": json.Number(n)}} {
			rec := &StepRecord{Winner: intent.Output{Value: v}}
			want, err := json.Marshal(rec)
			got, gerr := appendStepRecord(nil, rec)
			if err != nil {
				require.Error(t, gerr, "%q in %#v", n, v)
				continue
			}
			require.NoError(t, gerr, "%q in %#v", n, v)
			require.Equal(t, string(want), string(got), "%q in %#v", n, v)
		}
	}
}

// TestAppendStepRecordCyclicValue: an answer that contains itself (a
// task's own Decode can build one) is refused with an error, as
// json.Marshal refuses it, through objects of two keys, of more, and
// lists: the encoder's depth bound hands it to json.Marshal instead of
// recursing until the stack overflows.
func TestAppendStepRecordCyclicValue(t *testing.T) {
	two := map[string]any{"a": nil, "b": json.Number("1")}
	two["a"] = two
	second := map[string]any{"a": json.Number("1"), "b": nil}
	second["b"] = second
	three := map[string]any{"a": json.Number("1"), "b": nil, "c": "x"}
	three["b"] = three
	list := []any{json.Number("1"), nil}
	list[1] = list
	for name, v := range map[string]any{"two keys": two, "two keys, the second": second, "three keys": three, "list": list, "list in object": map[string]any{"l": list, "m": "y"}} {
		_, err := json.Marshal(v)
		require.Error(t, err, name)
		_, err = appendStepRecord(nil, &StepRecord{Winner: intent.Output{Value: v}})
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "cycle", name)
	}
}

// appender is a typed answer that writes its own JSON; its MarshalJSON
// writes the same value with white space, which json.Marshal compacts.
type appender struct{ text string }

func (a appender) AppendJSON(b []byte) []byte { return append(b, a.text...) }
func (a appender) MarshalJSON() ([]byte, error) {
	return []byte(strings.ReplaceAll(a.text, ",", ", ")), nil
}

// twoFaced breaks the JSONAppender contract on purpose: its AppendJSON
// and MarshalJSON write different values.
type twoFaced struct{}

func (twoFaced) AppendJSON(b []byte) []byte   { return append(b, `"appended"`...) }
func (twoFaced) MarshalJSON() ([]byte, error) { return []byte(`"marshalled"`), nil }

// TestJSONAppenderWritesTheLine: a winner that is a JSONAppender is
// appended by its AppendJSON (the line json.Marshal writes, without the
// call), and one whose AppendJSON writes what is not JSON is refused with
// an error naming its type.
func TestJSONAppenderWritesTheLine(t *testing.T) {
	rec := &StepRecord{Step: 4, K: 3, Key: "00000000000000ab", Winner: intent.Output{Value: appender{`{"move":[1,0,2],"next_state":[[],[],[1]]}`}}}
	got, err := appendStepRecord(nil, rec)
	require.NoError(t, err)
	want, err := json.Marshal(rec)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
	require.Contains(t, string(got), `"winner":{"value":{"move":[1,0,2],"next_state":[[],[],[1]]}}`)

	// AppendJSON is what was called: with it writing one thing and
	// MarshalJSON another, the line holds AppendJSON's.
	rec.Winner.Value = twoFaced{}
	got, err = appendStepRecord(nil, rec)
	require.NoError(t, err)
	require.Contains(t, string(got), `"winner":{"value":"appended"}`)

	for _, bad := range []string{``, `{"move":`, `[1,2]]`, `{"a":1}x`} {
		rec.Winner.Value = appender{bad}
		got, err := appendStepRecord([]byte("kept"), rec)
		require.Error(t, err, "%q", bad)
		require.Contains(t, err.Error(), "maker.appender's AppendJSON wrote")
		require.Contains(t, err.Error(), "not JSON")
		require.True(t, strings.HasPrefix(string(got), "kept"))
	}
}
