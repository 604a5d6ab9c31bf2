package fstools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/internal/words"
)

const globSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "glob matched against paths relative to path: * ? [abc] within a name, ** for any number of folders"},
    "path": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "folder to search, relative to the root folder (default \".\")"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

const grepSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "Go (RE2) regular expression"},
    "paths": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 4096}, "maxItems": 100, "description": "files or folders relative to the root folder (default [\".\"])"},
    "glob": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "only search files whose name (or, if it has a /, whose path) matches"},
    "case_insensitive": {"type": "boolean", "description": "match regardless of case (default false)"},
    "max_results": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "most matching lines to return (default 200)"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// glob is the glob tool.
func (s *sandbox) glob(ctx context.Context, args map[string]any) (string, error) {
	var a struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if err := executor.DecodeArgs(args, &a); err != nil {
		return "", err
	}
	if a.Path == "" {
		a.Path = "."
	}
	if err := checkGlob(a.Pattern); err != nil {
		return "", err
	}
	r, err := s.open()
	if err != nil {
		return "", err
	}
	base, err := s.dirPath(ctx, r, a.Path)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	matches, visited := 0, 0
	truncated := ""
	err = fs.WalkDir(r.FS(), base, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			return nil // unreadable entries are skipped
		}
		if visited++; visited > maxWalkEntries {
			truncated = fmt.Sprintf("[truncated: stopped after visiting %d entries]", maxWalkEntries)
			return errStopWalk
		}
		if p == base {
			return nil
		}
		if matchGlob(a.Pattern, relTo(base, p)) {
			if matches == maxListEntries {
				truncated = fmt.Sprintf("[truncated: only the first %d matches are shown]", maxListEntries)
				return errStopWalk
			}
			matches++
			out.WriteString(p)
			if d.IsDir() {
				out.WriteString("/")
			}
			out.WriteString("\n")
		}
		return nil
	})
	if err != nil && err != errStopWalk {
		return "", err
	}
	res := out.String()
	if matches == 0 {
		res = fmt.Sprintf("no path under %s matches %q", a.Path, a.Pattern)
	}
	if truncated != "" {
		executor.MarkTruncated(ctx)
		res = appendNote(res, truncated)
	}
	return res, nil
}

// dirPath resolves p and requires a folder.
func (s *sandbox) dirPath(ctx context.Context, r *os.Root, p string) (string, error) {
	rel, err := s.path(ctx, r, p)
	if err != nil {
		return "", err
	}
	fi, err := r.Stat(rel)
	if err != nil {
		return "", fsError(p, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%q is %s, not a folder", p, words.FileKind(fi.Mode()))
	}
	return rel, nil
}

func relTo(base, p string) string {
	if base == "." {
		return p
	}
	return strings.TrimPrefix(p, base+"/")
}

// checkGlob reports a malformed pattern as invalid arguments.
func checkGlob(pattern string) error {
	for _, seg := range strings.Split(pattern, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return refusef(executor.ErrInvalidArgs, "glob pattern %q is malformed (%v)", pattern, err)
		}
	}
	return nil
}

// matchGlob matches a slash-separated name against a pattern whose
// segments are path.Match patterns, or "**" for any number of segments.
//
// It runs in O(P*N) path.Match calls for P pattern and N name segments (a
// set of reachable name positions per pattern segment), never backtracking:
// repeated "**" cannot make it exponential. With Go's path.Match, linear in
// its two arguments, the whole costs at most the pattern's length times the
// name's.
func matchGlob(pattern, name string) bool {
	pat, segs := strings.Split(pattern, "/"), strings.Split(name, "/")
	// at[j]: the first pattern segments seen so far can consume exactly
	// segs[:j].
	at := make([]bool, len(segs)+1)
	next := make([]bool, len(segs)+1)
	at[0] = true
	for _, p := range pat {
		clear(next)
		any := false
		if p == "**" {
			// Any number of segments: every position from the first
			// reachable one on.
			for j, ok := range at {
				if ok || (j > 0 && next[j-1]) {
					next[j], any = true, true
				}
			}
		} else {
			for j, ok := range at[:len(segs)] {
				if ok {
					if m, _ := path.Match(p, segs[j]); m {
						next[j+1], any = true, true
					}
				}
			}
		}
		if !any {
			return false
		}
		at, next = next, at
	}
	return at[len(segs)]
}

// grep is the grep tool.
func (s *sandbox) grep(ctx context.Context, args map[string]any) (string, error) {
	var a struct {
		Pattern         string   `json:"pattern"`
		Paths           []string `json:"paths"`
		Glob            string   `json:"glob"`
		CaseInsensitive bool     `json:"case_insensitive"`
		MaxResults      int      `json:"max_results"`
	}
	if err := executor.DecodeArgs(args, &a); err != nil {
		return "", err
	}
	if len(a.Paths) == 0 {
		a.Paths = []string{"."}
	}
	if a.MaxResults < 1 {
		a.MaxResults = 200
	}
	a.MaxResults = min(a.MaxResults, maxGrepResults)
	expr := a.Pattern
	if a.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, insts, err := compileBounded(expr)
	if err != nil {
		return "", refusef(executor.ErrInvalidArgs, "pattern %q %v", a.Pattern, err)
	}
	if a.Glob != "" {
		if err := checkGlob(a.Glob); err != nil {
			return "", err
		}
	}
	r, err := s.open()
	if err != nil {
		return "", err
	}

	g := &grepRun{ctx: ctx, s: s, r: r, re: re, window: lineWindow(insts), glob: a.Glob, max: a.MaxResults, seen: map[string]bool{}}
	// Resolve every path first: one bad path denies the whole call.
	rels := make([]string, len(a.Paths))
	dirs := make([]bool, len(a.Paths))
	for i, p := range a.Paths {
		rel, err := s.path(ctx, r, p)
		if err != nil {
			return "", err
		}
		fi, err := r.Stat(rel)
		if err != nil {
			return "", fsError(p, err)
		}
		if !fi.IsDir() {
			if err := regular(p, fi); err != nil {
				return "", err
			}
		}
		rels[i], dirs[i] = rel, fi.IsDir()
	}
	for i, rel := range rels {
		if dirs[i] {
			err = g.walk(rel)
		} else {
			err = g.file(a.Paths[i], rel, true)
		}
		if err == errStopWalk {
			break
		}
		if err != nil {
			return "", err
		}
	}
	res := g.out.String()
	if g.matches == 0 {
		res = fmt.Sprintf("no line matches %q", a.Pattern)
	}
	if n := len(g.big); n > 0 {
		shown := g.big[:min(n, 10)]
		more := ""
		if n > len(shown) {
			more = fmt.Sprintf(" and %d more", n-len(shown))
		}
		g.notes = append(g.notes, fmt.Sprintf("[truncated: only the first %d bytes of %d file(s) were searched: %s%s]",
			s.readCap, n, strings.Join(shown, ", "), more))
	}
	if g.longLines > 0 {
		g.notes = append(g.notes, fmt.Sprintf("[truncated: %d line(s) longer than %d bytes were searched in their first %d bytes only]", g.longLines, g.window, g.window))
	}
	if len(g.notes) > 0 {
		executor.MarkTruncated(ctx)
		for _, n := range g.notes {
			res = appendNote(res, n)
		}
	}
	return res, nil
}

type grepRun struct {
	ctx     context.Context
	s       *sandbox
	r       *os.Root
	re      *regexp.Regexp
	window  int // bytes of one line that the expression is matched against
	glob    string
	max     int
	seen    map[string]bool
	out     strings.Builder
	matches int
	visited int
	notes   []string
	big     []string // files cut at the read cap
	// longLines counts lines longer than window, matched in part.
	longLines int
}

func (g *grepRun) walk(base string) error {
	return fs.WalkDir(g.r.FS(), base, func(p string, d fs.DirEntry, err error) error {
		if cerr := g.ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil || !d.Type().IsRegular() {
			return nil // folders go on; links, pipes, devices and unreadable entries are skipped
		}
		if g.visited++; g.visited > maxWalkEntries {
			g.notes = append(g.notes, fmt.Sprintf("[truncated: stopped after %d files]", maxWalkEntries))
			return errStopWalk
		}
		if g.glob != "" {
			name := path.Base(p)
			if strings.Contains(g.glob, "/") {
				name = p
			}
			if !matchGlob(g.glob, name) {
				return nil
			}
		}
		return g.file(p, p, false)
	})
}

// file searches one regular file. named says the caller named it, so that
// failures are errors rather than skips.
func (g *grepRun) file(display, rel string, named bool) error {
	if g.seen[rel] {
		return nil
	}
	g.seen[rel] = true
	f, _, err := g.s.openRegular(g.r, display, rel)
	if err != nil {
		if named {
			return err
		}
		return nil
	}
	defer f.Close()
	data, err := readCapped(g.ctx, f, g.s.readCap+1)
	switch {
	case g.ctx.Err() != nil:
		return g.ctx.Err()
	case err != nil && named:
		return fsError(display, err)
	case err != nil:
		return nil
	}
	if int64(len(data)) > g.s.readCap {
		data = data[:g.s.readCap]
		g.big = append(g.big, display)
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
		return nil // binary
	}
	data = bytes.TrimSuffix(data, []byte("\n"))
	if len(data) == 0 {
		return nil
	}
	for n := 0; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		// The matcher cannot be interrupted: each call is bounded by
		// window bytes against a bounded program, and the context is
		// checked between calls.
		if err := g.ctx.Err(); err != nil {
			return err
		}
		probe := line
		if len(probe) > g.window {
			probe = probe[:g.window]
			g.longLines++
		}
		if !g.re.Match(probe) {
			continue
		}
		if g.matches == g.max {
			g.notes = append(g.notes, fmt.Sprintf("[truncated: stopped after %d matching lines; narrow the search or raise max_results]", g.max))
			return errStopWalk
		}
		g.matches++
		text := string(line)
		if len(line) > maxGrepLineBytes {
			cut := maxGrepLineBytes
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			text = string(line[:cut]) + " [line cut]"
		}
		fmt.Fprintf(&g.out, "%s:%d: %s\n", display, n+1, text)
	}
	return nil
}

// Bounds of grep's matching. The Go (RE2) matcher is linear in the text
// but cannot be interrupted, and its cost is about the text's length times
// the program's size; so the program's size is bounded and so is the part
// of one line it is run on.
const (
	// maxRegexpInsts is the largest program (estimated before compiling)
	// a pattern may compile to.
	maxRegexpInsts = 2000
	// grepLineBudget is program instructions times line bytes allowed for
	// one match: some tens of milliseconds at worst.
	grepLineBudget = 2 << 20
	// minGrepWindow is the least of a line that is always searched.
	minGrepWindow = 1 << 10
)

// lineWindow is how many bytes of a line are matched with a program of
// insts instructions.
func lineWindow(insts int) int {
	return max(minGrepWindow, grepLineBudget/max(insts, 1))
}

// compileBounded compiles expr, refusing (before compiling) a program
// estimated larger than maxRegexpInsts. It returns the compiled expression
// and its program's size. Its errors are worded to follow the pattern.
func compileBounded(expr string) (*regexp.Regexp, int, error) {
	parsed, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, 0, fmt.Errorf("is not a Go (RE2) regular expression: %s", unwrapRegexp(err))
	}
	if n := estimateInsts(parsed); n > maxRegexpInsts {
		return nil, 0, fmt.Errorf("is too large: it compiles to about %d instructions and grep takes at most %d; use fewer or smaller repetitions", n, maxRegexpInsts)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, 0, fmt.Errorf("is not a Go (RE2) regular expression: %s", unwrapRegexp(err))
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, 0, fmt.Errorf("is not a Go (RE2) regular expression: %s", unwrapRegexp(err))
	}
	return re, len(prog.Inst), nil
}

// estimateInsts bounds from above, without compiling, how many
// instructions re compiles to; it saturates instead of overflowing.
func estimateInsts(re *syntax.Regexp) int {
	const huge = 1 << 30
	sum := func(subs []*syntax.Regexp) int {
		n := len(subs)
		for _, s := range subs {
			n = min(huge, n+estimateInsts(s))
		}
		return n
	}
	switch re.Op {
	case syntax.OpLiteral:
		return max(1, len(re.Rune))
	case syntax.OpCapture:
		return min(huge, 2+estimateInsts(re.Sub[0]))
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return min(huge, 1+estimateInsts(re.Sub[0])) // one split
	case syntax.OpRepeat:
		// Simplify unrolls x{n,m} into copies of x, each with at most one
		// split; x{n,} into n copies and a star.
		times := re.Max
		if times < 0 {
			times = re.Min + 1
		}
		times = max(times, 1)
		sub := estimateInsts(re.Sub[0])
		if sub+1 > huge/times {
			return huge
		}
		return (sub+1)*times + 1
	case syntax.OpConcat, syntax.OpAlternate:
		return sum(re.Sub)
	}
	return 1 + sum(re.Sub)
}

// unwrapRegexp drops regexp's "error parsing regexp: " prefix.
func unwrapRegexp(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}
