package maker

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/internal/jsonstr"
	"github.com/mdap-go/mdap/vote"
)

// This file writes a StepRecord's journal line by hand, without
// reflection: the line is on the step loop's critical path (it is encoded
// before the next step's first sample starts), and encoding/json's
// reflection over the record and its maps cost about as much as the rest
// of the step's orchestration (BenchmarkJournalEncode). The bytes are
// exactly json.Marshal's, so lines written by either read back alike
// (TestAppendStepRecordMatchesMarshal); values of types it does not know
// (a tool intent, an observation, a float or a custom type in an answer)
// go through json.Marshal.

// appendStepRecord appends rec's journal line (without a newline) to b.
func appendStepRecord(b []byte, rec *StepRecord) ([]byte, error) {
	var err error
	b = append(b, `{"step":`...)
	b = appendInt(b, rec.Step)
	if rec.Pending {
		b = append(b, `,"pending":true`...)
	}
	b = append(b, `,"k":`...)
	b = appendInt(b, rec.K)
	b = append(b, `,"winner":`...)
	if b, err = appendOutput(b, rec.Winner); err != nil {
		return b, err
	}
	b = append(b, `,"key":`...)
	b = jsonstr.Append(b, rec.Key)
	b = append(b, `,"votes":`...)
	b = appendVotes(b, rec.Votes, rec.Key)
	b = appendCounts(b, rec.Counts)
	if len(rec.Flags) > 0 {
		b = append(b, `,"flags":`...)
		b = appendIntMap(b, rec.Flags)
	}
	b = append(b, `,"usage":`...)
	b = appendUsage(b, rec.Usage)
	if len(rec.Models) > 0 {
		b = append(b, `,"models":[`...)
		for i, m := range rec.Models {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			b = appendCountsBody(b, m.Counts)
			b = append(b, `,"winner_votes":`...)
			b = appendInt(b, m.WinnerVotes)
			b = append(b, `,"usage":`...)
			b = appendUsage(b, m.Usage)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if rec.Correct != nil {
		b = append(b, `,"correct":`...)
		b = appendInt(b, *rec.Correct)
	}
	if rec.Contested {
		b = append(b, `,"contested":true`...)
	}
	if rec.Escalated {
		b = append(b, `,"escalated":true`...)
	}
	if rec.Checked {
		b = append(b, `,"checked":true`...)
	}
	b = append(b, `,"elapsed_ns":`...)
	b = appendInt(b, rec.Elapsed)
	if rec.Observation != nil {
		b = append(b, `,"observation":`...)
		if b, err = appendMarshal(b, rec.Observation); err != nil {
			return b, err
		}
	}
	if rec.ObservationDigest != "" {
		b = append(b, `,"observation_sha256":`...)
		b = jsonstr.Append(b, rec.ObservationDigest)
	}
	return append(b, '}'), nil
}

// appendCounts appends vote.Counts' fields, each after a comma, as an
// embedded struct's fields are marshalled.
func appendCounts(b []byte, c vote.Counts) []byte {
	return appendCountsBody(append(b, ','), c)
}

// appendCountsBody appends vote.Counts' fields, the first without a comma.
func appendCountsBody(b []byte, c vote.Counts) []byte {
	b = append(b, `"launched":`...)
	b = appendInt(b, c.Launched)
	b = append(b, `,"valid":`...)
	b = appendInt(b, c.Valid)
	b = append(b, `,"flagged":`...)
	b = appendInt(b, c.Flagged)
	b = append(b, `,"errors":`...)
	b = appendInt(b, c.Errors)
	b = append(b, `,"cancelled":`...)
	return appendInt(b, c.Cancelled)
}

func appendUsage(b []byte, u vote.Usage) []byte {
	b = append(b, `{"input_tokens":`...)
	b = appendInt(b, u.InputTokens)
	b = append(b, `,"output_tokens":`...)
	b = appendInt(b, u.OutputTokens)
	b = append(b, `,"latency_ns":`...)
	b = appendInt(b, u.Latency)
	if u.CachedInputTokens != 0 {
		b = append(b, `,"cached_input_tokens":`...)
		b = appendInt(b, u.CachedInputTokens)
	}
	if u.CacheWriteTokens != 0 {
		b = append(b, `,"cache_write_tokens":`...)
		b = appendInt(b, u.CacheWriteTokens)
	}
	if u.Requests != 0 {
		b = append(b, `,"requests":`...)
		b = appendInt(b, u.Requests)
	}
	return append(b, '}')
}

// appendVotes appends a step's votes as appendIntMap does. A step decided
// by one key alone (most steps) holds only the winner's key: it is looked
// up instead of iterated (a map iteration costs more than a lookup).
func appendVotes(b []byte, m map[string]int, winner string) []byte {
	if len(m) == 1 {
		if v, ok := m[winner]; ok {
			b = append(b, '{')
			b = jsonstr.Append(b, winner)
			b = append(b, ':')
			b = appendInt(b, v)
			return append(b, '}')
		}
	}
	return appendIntMap(b, m)
}

// appendIntMap appends m as a JSON object with sorted keys (null if nil).
func appendIntMap(b []byte, m map[string]int) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	if len(m) == 1 {
		for k, v := range m {
			b = jsonstr.Append(b, k)
			b = append(b, ':')
			b = appendInt(b, v)
		}
		return append(b, '}')
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, k)
		b = append(b, ':')
		b = appendInt(b, m[k])
	}
	return append(b, '}')
}

// appendOutput appends an intent.Output as json.Marshal does.
func appendOutput(b []byte, o intent.Output) ([]byte, error) {
	b = append(b, '{')
	var err error
	if o.Value != nil {
		b = append(b, `"value":`...)
		if b, err = appendAny(b, o.Value, 0); err != nil {
			return b, err
		}
	}
	if o.Intent != nil {
		if o.Value != nil {
			b = append(b, ',')
		}
		b = append(b, `"tool_intent":`...)
		if b, err = appendMarshal(b, o.Intent); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// maxAppendDepth bounds appendAny's recursion; deeper values go to
// json.Marshal, which has its own bound.
const maxAppendDepth = 64

// appendAny appends a decoded JSON value as json.Marshal does.
func appendAny(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxAppendDepth {
		return appendMarshal(b, v)
	}
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return jsonstr.Append(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return appendInt(b, x), nil
	case int64:
		return appendInt(b, x), nil
	case json.Number:
		if b, ok := appendNumber(b, x); ok {
			return b, nil
		}
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		return appendObject(b, x, depth)
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if n, ok := e.(json.Number); ok { // a list of numbers, without the call
				var done bool
				if b, done = appendNumber(b, n); done {
					continue
				}
			}
			if b, err = appendAny(b, e, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case JSONAppender:
		start := len(b)
		b = x.AppendJSON(b)
		if !jsonstr.Valid(b[start:]) {
			return b[:start], fmt.Errorf("maker: journal record: %T's AppendJSON wrote %q, which is not JSON", v, b[start:])
		}
		return b, nil
	}
	return appendMarshal(b, v)
}

// JSONAppender is implemented by a task's typed answer (an intent.Output
// Value) that writes its own JSON: the journal appends a step's winner
// with AppendJSON instead of json.Marshal, whose reflection and check of
// a MarshalJSON's output cost more than the rest of the line. AppendJSON
// must append exactly the bytes json.Marshal writes for the value (so
// that a line reads back alike whichever wrote it) and return the
// extended buffer. The journal checks that what it appended is JSON and
// refuses the step's record otherwise (an error from the solve, nothing
// written); that it equals json.Marshal's is the implementation's to
// test (hanoi.Answer's tests do). Cost of the check: one scan of the
// appended bytes.
type JSONAppender interface {
	AppendJSON(b []byte) []byte
}

// appendObject appends a decoded JSON object as json.Marshal does: its
// keys sorted. It reads each entry once (no lookup by key), and sorts
// small objects on the stack.
func appendObject(b []byte, m map[string]any, depth int) ([]byte, error) {
	var err error
	if len(m) == 2 { // Hanoi's answers, and many others
		var k [2]string
		var v [2]any
		i := 0
		for key, val := range m {
			k[i], v[i] = key, val
			i++
		}
		if k[1] < k[0] {
			k[0], k[1] = k[1], k[0]
			v[0], v[1] = v[1], v[0]
		}
		b = append(b, '{')
		b = jsonstr.Append(b, k[0])
		b = append(b, ':')
		if b, err = appendAny(b, v[0], depth+1); err != nil {
			return b, err
		}
		b = append(b, ',')
		b = jsonstr.Append(b, k[1])
		b = append(b, ':')
		if b, err = appendAny(b, v[1], depth+1); err != nil {
			return b, err
		}
		return append(b, '}'), nil
	}
	var small [8]entry
	entries := small[:0]
	for key, val := range m {
		entries = append(entries, entry{key, val})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.k, b.k) })
	b = append(b, '{')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, e.k)
		b = append(b, ':')
		if b, err = appendAny(b, e.v, depth+1); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// entry is one key and value of an object.
type entry struct {
	k string
	v any
}

// appendNumber appends n as json.Marshal writes it when it is a plain
// integer (see plainInteger), and reports whether it was; one or two
// digits, the usual case, are checked and copied byte by byte.
func appendNumber(b []byte, n json.Number) ([]byte, bool) {
	switch {
	case len(n) == 1 && n[0] >= '0' && n[0] <= '9':
		return append(b, n[0]), true
	case len(n) == 2 && n[0] >= '1' && n[0] <= '9' && n[1] >= '0' && n[1] <= '9':
		return append(b, n[0], n[1]), true
	case plainInteger(string(n)):
		return append(b, n...), true
	}
	return b, false
}

// plainInteger reports whether s is -?(0|[1-9][0-9]*), which json.Marshal
// writes as it is.
func plainInteger(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func appendMarshal(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return b, fmt.Errorf("maker: journal record: %w", err)
	}
	return append(b, j...), nil
}

// appendInt appends v in decimal, as strconv.AppendInt; a single digit
// (a count, a margin) without the call.
func appendInt[T ~int | ~int64](b []byte, v T) []byte {
	if uint64(v) < 10 {
		return append(b, byte('0'+v))
	}
	return strconv.AppendInt(b, int64(v), 10)
}
