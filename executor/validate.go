package executor

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/internal/schema"
	"github.com/mdap-go/mdap/internal/words"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// argsRoot is how the arguments object is named in messages and in
// intent.Observation.Healed.
const argsRoot = "arguments"

var printer = message.NewPrinter(language.English)

// compileSchema checks that raw is a JSON object and compiles it as a JSON
// Schema (draft 2020-12 by default, external $refs refused). It returns the
// compiled schema, the document decoded with json.Number numbers (for
// healing) and decoded plainly (for providers that need a map).
func compileSchema(name string, raw []byte) (*jsonschema.Schema, any, map[string]any, error) {
	doc, err := schema.Decode(raw)
	if err != nil {
		return nil, nil, nil, err
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, nil, nil, errors.New("not a JSON object")
	}
	var params map[string]any
	if err := json.Unmarshal(raw, &params); err != nil {
		return nil, nil, nil, fmt.Errorf("not JSON: %v", err)
	}
	sch, err := schema.CompileDoc("tools/"+name, doc)
	if err != nil {
		return nil, nil, nil, err
	}
	return sch, doc, params, nil
}

// prepare bounds, normalises, heals and validates args against reg's
// schema. It returns the arguments to run with and the healed paths, or the
// list of every problem. args is not changed.
func (e *Executor) prepare(reg *registered, args map[string]any) (map[string]any, []string, []string) {
	norm, healed, probs := e.normalizeArgs(reg, args)
	if len(probs) > 0 {
		return nil, healed, probs
	}
	if err := reg.schema.Validate(any(norm)); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, healed, []string{fmt.Sprintf("%s: %v", argsRoot, err)}
		}
		return nil, healed, problems(ve)
	}
	return norm, healed, nil
}

// normalizeArgs bounds, normalises and heals args against reg's schema,
// without validating them. It returns a fresh copy and the healed paths,
// or the problems of a call beyond the input limits.
//
// The limits are checked on the healed copy, so that the copy passes them
// again unchanged: normalizeArgs is idempotent, which Normalize relies on.
// The copy is encoded a second time only when integral numbers were
// rewritten or values healed, which can lengthen it.
func (e *Executor) normalizeArgs(reg *registered, args map[string]any) (map[string]any, []string, []string) {
	if len(args) > MaxArgs {
		return nil, nil, []string{fmt.Sprintf("%s: %d arguments; a call takes at most %d", argsRoot, len(args), MaxArgs)}
	}
	tooBig := func(size int) []string {
		return []string{fmt.Sprintf("%s: %d bytes as JSON; a call takes at most %d", argsRoot, size, DefaultArgsCap)}
	}
	norm, size, changed, err := normalise(args, DefaultArgsCap)
	switch {
	case errors.Is(err, errArgsTooBig):
		return nil, nil, tooBig(size)
	case err != nil:
		return nil, nil, []string{fmt.Sprintf("%s: not JSON-encodable: %v", argsRoot, err)}
	}
	var healed []string
	heal(reg.doc, norm, argsRoot, &healed)
	sort.Strings(healed)
	if changed || len(healed) > 0 {
		if b, err := json.Marshal(norm); err == nil && len(b) > DefaultArgsCap {
			return nil, healed, tooBig(len(b))
		}
	}
	if tooDeep(norm, MaxArgsDepth) {
		return nil, healed, []string{fmt.Sprintf("%s: nested more than %d deep (objects and arrays); a call takes at most %d levels", argsRoot, MaxArgsDepth, MaxArgsDepth)}
	}
	if n := countValues(norm, MaxArgValues+1); n > MaxArgValues {
		return nil, healed, []string{fmt.Sprintf("%s: more than %d values; a call takes at most %d", argsRoot, MaxArgValues, MaxArgValues)}
	}
	return norm, healed, nil
}

// countValues counts the values of v at any depth, v included, stopping
// once the count reaches stop.
func countValues(v any, stop int) int {
	n := 1
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if n >= stop {
				break
			}
			n += countValues(e, stop-n)
		}
	case []any:
		for _, e := range x {
			if n >= stop {
				break
			}
			n += countValues(e, stop-n)
		}
	}
	return n
}

// tooDeep reports whether v nests objects and arrays more than max deep,
// v itself counting as one level. Cost: a walk of v, stopped at max.
func tooDeep(v any, max int) bool {
	switch x := v.(type) {
	case map[string]any:
		if max <= 0 {
			return true
		}
		for _, e := range x {
			if tooDeep(e, max-1) {
				return true
			}
		}
	case []any:
		return max <= 0 || slices.ContainsFunc(x, func(e any) bool { return tooDeep(e, max-1) })
	}
	return max < 0
}

// problems flattens a validation error into one line per leaf cause,
// "path: message", deduplicated and in a deterministic order: by instance
// location (array indexes in numeric order), then in the library's order
// of keywords, then by message. The validator walks objects in map order,
// and lists additional properties in that order; both are sorted here, so
// the same call always gets the same denial. Cost: O(n log n) in the
// number of causes.
func problems(ve *jsonschema.ValidationError) []string {
	type problem struct {
		loc   []string
		group int // first index of its (location, keyword) in the library's order
		line  string
	}
	var out []problem
	seen := map[string]bool{}
	groups := map[string]int{}
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		if k, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
			k.Properties = slices.Sorted(slices.Values(k.Properties))
		}
		line := instancePath(e.InstanceLocation) + ": " + e.ErrorKind.LocalizedString(printer)
		if seen[line] {
			return
		}
		seen[line] = true
		key := strings.Join(e.InstanceLocation, "/") + "\x00" + strings.Join(e.ErrorKind.KeywordPath(), "/")
		g, ok := groups[key]
		if !ok {
			g = len(out)
			groups[key] = g
		}
		out = append(out, problem{loc: e.InstanceLocation, group: g, line: line})
	}
	walk(ve)
	slices.SortStableFunc(out, func(a, b problem) int {
		return cmp.Or(compareLocations(a.loc, b.loc), a.group-b.group, strings.Compare(a.line, b.line))
	})
	lines := make([]string, len(out))
	for i, p := range out {
		lines[i] = p.line
	}
	return lines
}

// compareLocations orders JSON pointer token lists: a parent before its
// children, numeric tokens (array indexes) by value, others as strings.
func compareLocations(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] == b[i] {
			continue
		}
		x, xerr := strconv.Atoi(a[i])
		y, yerr := strconv.Atoi(b[i])
		if xerr == nil && yerr == nil {
			return x - y
		}
		return strings.Compare(a[i], b[i])
	}
	return len(a) - len(b)
}

// instancePath renders a JSON pointer's tokens as arguments.a[0].b.
func instancePath(tokens []string) string {
	p := argsRoot
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			p += "[" + t + "]"
		} else {
			p = childPath(p, t)
		}
	}
	return p
}

// maxProblemBytes is the longest problem line a denial shows.
const maxProblemBytes = 300

// invalidMessage words a list of problems for the model: the first
// MaxProblems, each cut at maxProblemBytes, then how many more, and a
// one-line summary of what the tool takes.
func invalidMessage(tool string, doc any, probs []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid arguments for %s (%s); nothing ran:", tool, words.Plural(len(probs), "problem"))
	for i, p := range probs {
		if i == MaxProblems {
			fmt.Fprintf(&b, "\n- and %d more", len(probs)-MaxProblems)
			break
		}
		b.WriteString("\n- ")
		b.WriteString(cutText(p, maxProblemBytes))
	}
	if sum := paramSummary(doc); sum != "" {
		fmt.Fprintf(&b, "\n%s takes %s.", tool, sum)
	}
	return b.String()
}

// cutText cuts s to at most n bytes on a UTF-8 boundary, marking a cut
// with "…".
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return words.Prefix(s, n) + "…"
}

// paramSummary describes a schema's top-level properties: required ones
// first, then by name, "path (string, required), limit (integer)", and
// whether other arguments are refused.
func paramSummary(doc any) string {
	sch, ok := doc.(map[string]any)
	if !ok {
		return ""
	}
	props, _ := sch["properties"].(map[string]any)
	args := DescribeArgs(sch) // required first, then by name
	if len(args) == 0 {
		return ""
	}
	parts := make([]string, len(args))
	for i, a := range args {
		var attrs []string
		if p, ok := props[a.Name].(map[string]any); ok {
			if ts := schemaTypes(p); len(ts) > 0 {
				attrs = append(attrs, strings.Join(ts, " or "))
			}
		}
		if a.Required {
			attrs = append(attrs, "required")
		}
		parts[i] = a.Name
		if len(attrs) > 0 {
			parts[i] += " (" + strings.Join(attrs, ", ") + ")"
		}
	}
	s := strings.Join(parts, ", ")
	if ap, ok := sch["additionalProperties"].(bool); ok && !ap {
		s += "; no other arguments"
	}
	return s
}
