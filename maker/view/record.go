package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/mdap-go/mdap/maker/journal"
)

// decodeStep reads the fields of a step line the aggregate needs,
// skipping the winner, the observation and the chain without decoding
// them: encoding/json over the whole line took most of a 20-disk
// journal's read. The line is a JSON object as the solver encodes a
// StepRecord (no white space between tokens).
func decodeStep(line []byte) (journal.StepRecord, error) {
	var rec journal.StepRecord
	err := walkObject(line, func(key, val []byte) error {
		var err error
		switch string(key) {
		case "step":
			rec.Step, err = atoi(val)
		case "pending":
			rec.Pending = string(val) == "true"
		case "k":
			rec.K, err = atoi(val)
		case "key":
			rec.Key = string(bytes.Trim(val, `"`))
		case "votes":
			rec.Votes, err = intMap(val)
		case "launched":
			rec.Launched, err = atoi(val)
		case "valid":
			rec.Valid, err = atoi(val)
		case "flagged":
			rec.Flagged, err = atoi(val)
		case "errors":
			rec.Errors, err = atoi(val)
		case "cancelled":
			rec.Cancelled, err = atoi(val)
		case "flags":
			err = json.Unmarshal(val, &rec.Flags)
		case "usage":
			err = walkObject(val, func(k, v []byte) error {
				n, err := atoi(v)
				switch string(k) {
				case "input_tokens":
					rec.Usage.InputTokens = n
				case "output_tokens":
					rec.Usage.OutputTokens = n
				case "latency_ns":
					rec.Usage.Latency = time.Duration(n)
				case "cached_input_tokens":
					rec.Usage.CachedInputTokens = n
				case "cache_write_tokens":
					rec.Usage.CacheWriteTokens = n
				case "requests":
					rec.Usage.Requests = n
				}
				return err
			})
		case "models":
			err = json.Unmarshal(val, &rec.Models)
		case "contested":
			rec.Contested = string(val) == "true"
		case "escalated":
			rec.Escalated = string(val) == "true"
		case "checked":
			rec.Checked = string(val) == "true"
		case "elapsed_ns":
			var ns int
			ns, err = atoi(val)
			rec.Elapsed = time.Duration(ns)
		}
		if err != nil {
			return errors.New(string(key) + ": " + err.Error())
		}
		return nil
	})
	return rec, err
}

// intMap reads an object of integers (keys without escapes).
func intMap(b []byte) (map[string]int, error) {
	m := map[string]int{}
	err := walkObject(b, func(k, v []byte) error {
		n, err := atoi(v)
		m[string(k)] = n
		return err
	})
	return m, err
}

func atoi(b []byte) (int, error) { return strconv.Atoi(string(b)) }

var errSyntax = errors.New("not a JSON object as the journal writes it")

// walkObject calls fn with each top-level key (unquoted; journal keys
// hold no escapes) and the bytes of its value, of a compact JSON object.
func walkObject(b []byte, fn func(key, val []byte) error) error {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return errSyntax
	}
	i := 1
	for i < len(b)-1 {
		if b[i] != '"' {
			return errSyntax
		}
		end := bytes.IndexByte(b[i+1:], '"')
		if end < 0 {
			return errSyntax
		}
		key := b[i+1 : i+1+end]
		i += end + 2
		if i >= len(b) || b[i] != ':' {
			return errSyntax
		}
		i++
		j, err := skipValue(b, i)
		if err != nil {
			return err
		}
		if err := fn(key, b[i:j]); err != nil {
			return err
		}
		i = j
		if i < len(b)-1 {
			if b[i] != ',' {
				return errSyntax
			}
			i++
		}
	}
	return nil
}

// skipValue returns the end of the compact JSON value at b[i]: a string,
// an object or array (brackets matched outside strings), or a literal.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, errSyntax
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
			j++
		}
		if j == i {
			return 0, errSyntax
		}
		return j, nil
	}
}

// skipString returns the end of the string at b[i] (after its quote).
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errSyntax
}
