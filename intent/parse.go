package intent

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
)

const (
	keyToolIntent = "tool_intent"
	keyRationale  = "rationale"
)

// Parse reads one microagent reply and returns what it says.
//
// Where the answer is found (the candidates, in reply order):
//
//   - fenced code blocks (backtick fences, CommonMark-style: three or more
//     backticks, closed by at least as many; ~~~ fences are prose) whose
//     info string is json (any case), and bare
//     fences (no info string) whose content starts with '{' or '['; blocks
//     in any other language are skipped, JSON inside them included; an
//     unclosed fence runs to the end of the reply;
//   - JSON objects in the text outside fences: a '{' followed (after
//     optional white space) by '"', up to its matching '}' (strings
//     respected), on one line or several, e.g.
//     `The move is {"move":[1,0,2]} done.`. A '{' not followed by '"' is
//     prose; so are arrays and scalars in running text;
//   - but a reply without any fence that is, as a whole (white space and a
//     byte-order mark trimmed), exactly one JSON value of any kind (object,
//     array, string, number, boolean) is the only candidate.
//
// Every candidate found must decode, and all of them must give the same
// canonical form: an answer restated identically (or in another key order,
// spacing or number spelling, or with another rationale) is one answer and
// Parse returns its first occurrence; two different answers are
// ErrAmbiguous.
//
// How a decoded object becomes an Output: an object with a "tool_intent" key
// holds the intent there (or none, if it is null) and its other keys, if
// any, form Value, except "rationale": beside "tool_intent" it is the
// intent's rationale, exactly like the one inside it (a string or null,
// never part of Value or Key; the inner one wins when both are
// non-empty); an object of the bare intent shape (a "tool_name" or "tool"
// key, and no keys other than tool_name, tool, arguments, args and
// rationale) is an intent with no Value; any other value is Value. Inside
// "tool_intent" the name may be spelled tool, tool_name or name, the
// arguments args or arguments. Arguments given as a string holding a JSON
// object are decoded ("healing"); absent, null, "" and "null" arguments are
// no arguments, returned as an empty, non-nil map. Value holds the types
// listed on [Output] (see there for what equal Keys guarantee).
//
// Errors, each wrapping one sentinel: [ErrNoAnswer] for an empty reply, one
// with no candidate, or an answer that is null; [ErrMalformed] for a
// candidate that does not decode (or nests deeper than [MaxDepth]), and for
// a reply with no other candidate that starts with '{' or '[' but is not
// JSON; [ErrInvalidIntent] for an ill-formed intent; [ErrAmbiguous] for two
// different answers. With several problems, the first candidate in the
// reply that has one decides the error.
//
// Cost: time and memory linear in len(text), whatever its content (1 MiB
// of '{' or of backticks included); no recursion deeper than MaxDepth.
// Parse is safe for concurrent use.
func Parse(text string) (Output, error) {
	trimmed := strings.TrimLeftFunc(text, isSpaceOrBOM)
	lead := len(text) - len(trimmed) // reported offsets are in the original text
	text = strings.TrimRightFunc(trimmed, unicode.IsSpace)
	if text == "" {
		return Output{}, fmt.Errorf("%w: the reply is empty", ErrNoAnswer)
	}
	cands, hasFence := findCandidates(text)
	if len(cands) == 0 {
		if !hasFence && (text[0] == '{' || text[0] == '[') {
			_, err := decodeJSON(text)
			return Output{}, fmt.Errorf("%w: the reply starts like JSON but does not decode: %v", ErrMalformed, err)
		}
		return Output{}, fmt.Errorf("%w: no fenced JSON block, JSON object or JSON reply found", ErrNoAnswer)
	}
	var first Output
	var firstCanon []byte
	for i, c := range cands {
		v := c.val
		if !c.done {
			var err error
			if v, err = decodeJSON(c.text); err != nil {
				return Output{}, malformed(c, lead, err)
			}
		}
		o, p := toOutput(v)
		if p != nil {
			return Output{}, fmt.Errorf("%w: %s at byte %d: %s", p.sentinel, c.where, lead+c.off, p.msg)
		}
		if len(cands) == 1 {
			return o, nil
		}
		canon, err := Canonical(o)
		if err != nil { // unreachable for a parsed Output; kept honest
			return Output{}, fmt.Errorf("%s at byte %d: %w", c.where, lead+c.off, err)
		}
		if i == 0 {
			first, firstCanon = o, canon
			continue
		}
		if !bytes.Equal(canon, firstCanon) {
			return Output{}, fmt.Errorf("%w: %s at byte %d says %s but %s at byte %d says %s",
				ErrAmbiguous, cands[0].where, lead+cands[0].off, abbreviate(firstCanon), c.where, lead+c.off, abbreviate(canon))
		}
	}
	return first, nil
}

func isSpaceOrBOM(r rune) bool { return r == '\ufeff' || unicode.IsSpace(r) }

// malformed reports a decoding error with offsets in the original reply.
func malformed(c candidate, lead int, err error) error {
	if se, ok := err.(*syntaxError); ok {
		return fmt.Errorf("%w: %s starting at byte %d: %s at byte %d", ErrMalformed, c.where, lead+c.off, se.msg, lead+c.off+se.off)
	}
	return fmt.Errorf("%w: %s starting at byte %d: %v", ErrMalformed, c.where, lead+c.off, err)
}

// abbreviate shortens a canonical form for an error message.
func abbreviate(b []byte) string {
	const max = 120
	if len(b) <= max {
		return string(b)
	}
	return string(b[:max]) + "..."
}

// candidate is a stretch of the reply that should hold one JSON value.
type candidate struct {
	where string // "fenced block", "inline object" or "whole reply"
	off   int    // byte offset in the reply, after leading white space
	text  string
	val   any  // the decoded value, when decoded already
	done  bool // val is set
}

// findCandidates returns the JSON candidates of text in reply order, and
// whether text has any code fence. It runs in linear time: every line is
// looked at once by the fence scanner and every byte outside fences at most
// a constant number of times by the object scanner.
func findCandidates(text string) (cands []candidate, hasFence bool) {
	var (
		outStart, pos            int  // start of the text outside fences; current line
		inFence, fenceJSON, skip bool // skip: a block in another language
		fenceLen, contentStart   int
	)
	closeFence := func(content string, off int) {
		t := strings.TrimSpace(content)
		if !skip && (fenceJSON || (t != "" && (t[0] == '{' || t[0] == '['))) {
			cands = append(cands, candidate{where: "fenced block", off: off, text: content})
		}
	}
	for pos < len(text) {
		end, next := len(text), len(text)
		if i := strings.IndexByte(text[pos:], '\n'); i >= 0 {
			end, next = pos+i, pos+i+1
		}
		line := text[pos:end]
		if !inFence {
			if n, info, ok := fenceOpener(line); ok {
				hasFence = true
				cands = scanObjects(cands, text[outStart:pos], outStart)
				lang := strings.TrimSpace(info)
				if i := strings.IndexFunc(lang, unicode.IsSpace); i >= 0 {
					lang = lang[:i] // the first word of the info string
				}
				fenceJSON = strings.EqualFold(lang, "json")
				skip = lang != "" && !fenceJSON
				inFence, fenceLen, contentStart = true, n, next
			}
		} else if isFenceCloser(line, fenceLen) {
			closeFence(text[contentStart:pos], contentStart)
			inFence, outStart = false, next
		}
		pos = next
	}
	if inFence { // an unclosed fence runs to the end of the reply
		closeFence(text[min(contentStart, len(text)):], contentStart)
		return cands, true
	}
	if !hasFence {
		// A reply that is exactly one JSON value is its own candidate.
		if v, err := decodeJSON(text); err == nil {
			return []candidate{{where: "whole reply", off: 0, text: text, val: v, done: true}}, false
		}
	}
	return scanObjects(cands, text[outStart:], outStart), hasFence
}

// fenceOpener reports whether line opens a backtick code fence: optional
// indentation, three or more backticks, then an info string without
// backticks (CommonMark). It returns the number of backticks and the info.
func fenceOpener(line string) (n int, info string, ok bool) {
	t := strings.TrimLeft(line, " \t")
	for n < len(t) && t[n] == '`' {
		n++
	}
	if n < 3 || strings.IndexByte(t[n:], '`') >= 0 {
		return 0, "", false
	}
	return n, t[n:], true
}

// isFenceCloser reports whether line closes a fence opened with n
// backticks: at least n backticks and nothing else but white space.
func isFenceCloser(line string, n int) bool {
	t := strings.TrimSpace(line)
	return len(t) >= n && strings.Trim(t, "`") == ""
}

// scanObjects appends the inline object candidates of s (which starts at
// byte base of the reply). A candidate starts at a '{' followed, after
// optional white space, by '"', and ends at the matching '}', counting
// braces outside strings; an unterminated one runs to the end of s. The scan
// resumes after each candidate, so it is linear in len(s).
func scanObjects(cands []candidate, s string, base int) []candidate {
	i := 0
	for i < len(s) {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			break
		}
		j += i
		k := j + 1
		for k < len(s) && isSpace(s[k]) {
			k++
		}
		if k >= len(s) || s[k] != '"' {
			i = k
			continue
		}
		end := matchBrace(s, j)
		cands = append(cands, candidate{where: "inline object", off: base + j, text: s[j:end]})
		i = end
	}
	return cands
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// matchBrace returns the offset just after the '}' matching the '{' at
// s[start], or len(s) if there is none.
func matchBrace(s string, start int) int {
	depth := 0
	inStr := false
	for p := start; p < len(s); p++ {
		c := s[p]
		if inStr {
			switch c {
			case '\\':
				p++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return p + 1
			}
		}
	}
	return len(s)
}

// problem is a failure to read a decoded value as an Output.
type problem struct {
	sentinel error
	msg      string
}

func problemf(sentinel error, format string, args ...any) *problem {
	return &problem{sentinel: sentinel, msg: fmt.Sprintf(format, args...)}
}

// toOutput reads a decoded candidate (which it may modify) as an Output.
func toOutput(v any) (Output, *problem) {
	switch x := v.(type) {
	case nil:
		return Output{}, problemf(ErrNoAnswer, "the answer is JSON null")
	case map[string]any:
		if ti, ok := x[keyToolIntent]; ok {
			delete(x, keyToolIntent)
			// A rationale beside the intent is the intent's, like the
			// one inside it: never part of Value.
			outer, p := rationaleOf(x, "beside "+keyToolIntent)
			if p != nil {
				return Output{}, p
			}
			delete(x, keyRationale)
			var o Output
			if len(x) > 0 {
				o.Value = x
			}
			if ti != nil {
				tm, ok := ti.(map[string]any)
				if !ok {
					return Output{}, problemf(ErrInvalidIntent, "%q must be an object, not %s", keyToolIntent, jsonKind(ti))
				}
				in, p := intentFrom(tm, false)
				if p != nil {
					return Output{}, p
				}
				if in.Rationale == "" {
					in.Rationale = outer
				}
				o.Intent = in
			}
			if o.Value == nil && o.Intent == nil {
				return Output{}, problemf(ErrNoAnswer, "%q is null and nothing else is given", keyToolIntent)
			}
			return o, nil
		}
		if isBareIntent(slices.Collect(maps.Keys(x))) {
			in, p := intentFrom(x, true)
			if p != nil {
				return Output{}, p
			}
			return Output{Intent: in}, nil
		}
		return Output{Value: x}, nil
	default:
		return Output{Value: v}, nil
	}
}

// The keys of a bare intent, and those accepted inside "tool_intent".
var (
	bareIntentKeys  = []string{"args", "arguments", "rationale", "tool", "tool_name"}
	innerIntentKeys = []string{"args", "arguments", "name", "rationale", "tool", "tool_name"}
)

// isBareIntent reports whether an object's keys make it a bare intent: a
// tool name and nothing but bareIntentKeys.
func isBareIntent(keys []string) bool {
	return (slices.Contains(keys, "tool") || slices.Contains(keys, "tool_name")) &&
		!slices.ContainsFunc(keys, func(k string) bool { return !slices.Contains(bareIntentKeys, k) })
}

// intentFrom reads an intent object: the inside of "tool_intent", or a bare
// intent (where "name" is not a spelling of the tool name).
func intentFrom(m map[string]any, bare bool) (*ToolIntent, *problem) {
	allowed, nameKeys := innerIntentKeys, []string{"tool", "tool_name", "name"}
	where := "in " + keyToolIntent
	if bare {
		allowed, nameKeys = bareIntentKeys, []string{"tool", "tool_name"}
		where = "in a bare tool intent"
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(allowed, k) {
			return nil, problemf(ErrInvalidIntent, "unexpected key %q %s (want one of %s)", k, where, strings.Join(allowed, ", "))
		}
	}
	nameKey, p := oneOf(m, nameKeys, where)
	if p != nil {
		return nil, p
	}
	if nameKey == "" {
		return nil, problemf(ErrInvalidIntent, "no tool name %s (want %s)", where, strings.Join(nameKeys, ", "))
	}
	tool, ok := m[nameKey].(string)
	if !ok {
		return nil, problemf(ErrInvalidIntent, "tool name %q must be a string, not %s", nameKey, jsonKind(m[nameKey]))
	}
	if tool == "" {
		return nil, problemf(ErrInvalidIntent, "tool name %q is empty", nameKey)
	}
	argsKey, p := oneOf(m, []string{"args", "arguments"}, where)
	if p != nil {
		return nil, p
	}
	in := &ToolIntent{Tool: tool}
	var raw any
	if argsKey != "" {
		raw = m[argsKey]
	}
	if in.Args, p = healArgs(raw, argsKey); p != nil {
		return nil, p
	}
	if in.Rationale, p = rationaleOf(m, where); p != nil {
		return nil, p
	}
	return in, nil
}

// rationaleOf returns m's "rationale": a string, or "" when absent or null.
func rationaleOf(m map[string]any, where string) (string, *problem) {
	switch r := m[keyRationale].(type) {
	case nil:
		return "", nil
	case string:
		return r, nil
	default:
		return "", problemf(ErrInvalidIntent, "rationale must be a string, not %s (%s)", jsonKind(r), where)
	}
}

// oneOf returns which of keys m has: "" for none, a problem for several.
func oneOf(m map[string]any, keys []string, where string) (string, *problem) {
	found := ""
	for _, k := range keys {
		if _, ok := m[k]; ok {
			if found != "" {
				return "", problemf(ErrInvalidIntent, "both %q and %q given %s", found, k, where)
			}
			found = k
		}
	}
	return found, nil
}

// healArgs turns the raw arguments of an intent into its Args: an object is
// kept; absent or null is no arguments; a string is decoded if it holds a
// JSON object (or is empty, or holds null); anything else fails.
func healArgs(raw any, key string) (map[string]any, *problem) {
	switch x := raw.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return x, nil
	case string:
		t := strings.TrimSpace(x)
		if t == "" {
			return map[string]any{}, nil
		}
		d, err := decodeJSON(t)
		if err != nil {
			return nil, problemf(ErrInvalidIntent, "%s must be a JSON object, not a string that does not decode as JSON (%v)", key, err)
		}
		switch y := d.(type) {
		case nil:
			return map[string]any{}, nil
		case map[string]any:
			return y, nil
		default:
			return nil, problemf(ErrInvalidIntent, "%s must be a JSON object, not a string holding %s", key, jsonKind(d))
		}
	default:
		return nil, problemf(ErrInvalidIntent, "%s must be a JSON object, not %s", key, jsonKind(raw))
	}
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	default:
		return "a number"
	}
}
