package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
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
	if err := DecodeArgs(args, &a); err != nil {
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
		MarkTruncated(ctx)
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
		return "", fmt.Errorf("%q is %s, not a folder", p, fileKind(fi.Mode()))
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
			return refusef(ErrInvalidArgs, "glob pattern %q is malformed (%v)", pattern, err)
		}
	}
	return nil
}

// matchGlob matches a slash-separated name against a pattern whose
// segments are path.Match patterns, or "**" for any number of segments.
func matchGlob(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range name {
				if matchSegs(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
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
	if err := DecodeArgs(args, &a); err != nil {
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
	re, err := regexp.Compile(expr)
	if err != nil {
		return "", refusef(ErrInvalidArgs, "pattern %q is not a Go (RE2) regular expression: %v", a.Pattern, unwrapRegexp(err))
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

	g := &grepRun{ctx: ctx, s: s, r: r, re: re, glob: a.Glob, max: a.MaxResults, seen: map[string]bool{}}
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
	if len(g.notes) > 0 {
		MarkTruncated(ctx)
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
	glob    string
	max     int
	seen    map[string]bool
	out     strings.Builder
	matches int
	visited int
	notes   []string
	big     []string // files cut at the read cap
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
	data, err := io.ReadAll(io.LimitReader(f, g.s.readCap+1))
	if err != nil {
		if named {
			return fsError(display, err)
		}
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
	for n, line := range bytes.Split(data, []byte("\n")) {
		if !g.re.Match(line) {
			continue
		}
		if g.matches == g.max {
			g.notes = append(g.notes, fmt.Sprintf("[truncated: stopped after %d matching lines; narrow the search or raise max_results]", g.max))
			return errStopWalk
		}
		g.matches++
		text, cut := capText(string(line), maxGrepLineBytes)
		if cut {
			text = text[:strings.LastIndexByte(text, '\n')] + " [line cut]"
		}
		fmt.Fprintf(&g.out, "%s:%d: %s\n", display, n+1, text)
	}
	return nil
}

// unwrapRegexp drops regexp's "error parsing regexp: " prefix.
func unwrapRegexp(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}
