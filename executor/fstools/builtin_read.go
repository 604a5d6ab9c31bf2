package fstools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/internal/words"
)

// Limits of the built-in tools besides the read cap.
const (
	defaultReadLines = 2000 // read_file's default limit
	maxListEntries   = 1000 // entries list_dir shows
	maxGrepResults   = 1000 // grep's largest max_results
	maxGrepLineBytes = 300  // bytes of a matching line that grep shows
	binarySniffBytes = 8000 // bytes checked for a NUL to call a file binary
)

// maxWalkEntries is the number of entries glob and grep visit. A
// variable only so that a test can show the bound on a folder of a
// thousand files instead of 100,000 (TestGlobStopsAfterMaxWalkEntries);
// nothing else sets it.
var maxWalkEntries = 100000

// builtinTools returns the file tools over sb, in the categories
// categories.Builtin gives them.
func builtinTools(sb *sandbox) []executor.Tool {
	tools := []executor.Tool{
		executor.NewTool("read_file", categories.FileRead,
			"Read a text file under the root folder. Lines are counted from 1; offset is the first line to return "+
				"(default 1), limit the most lines to return (default 2000). At most the read cap of bytes is read "+
				"from the start of a file; the result says when it was cut.",
			json.RawMessage(readFileSchema), sb.readFile),
		executor.NewTool("list_dir", categories.FileRead,
			"List a folder under the root folder (default: the root itself), sorted by name: folders end with /, "+
				"symbolic links with @, named pipes with |, sockets with =; files show their size.",
			json.RawMessage(listDirSchema), sb.listDir),
		executor.NewTool("glob", categories.Search,
			"Find files under a folder (default: the root) whose path relative to that folder matches a glob "+
				"pattern: * and ? within a name, [abc] classes, ** for any number of folders. Symbolic links are "+
				"listed but not followed.",
			json.RawMessage(globSchema), sb.glob),
		executor.NewTool("grep", categories.Search,
			"Search files for lines matching a Go (RE2) regular expression. paths are files or folders under the "+
				"root (default: the root); folders are searched recursively without following symbolic links; "+
				"glob keeps only files whose name (or, if it has a /, whose path) matches. Binary files are skipped. "+
				"Prints path:line: text.",
			json.RawMessage(grepSchema), sb.grep),
		executor.NewTool("write_file", categories.FileWrite,
			"Create or replace a text file under the root folder with the given content. The write is atomic "+
				"(a temporary file renamed into place). Missing parent folders are created only with create_dirs.",
			json.RawMessage(writeFileSchema), sb.writeFile),
	}
	for i, t := range tools {
		tools[i] = boundTool{t}
	}
	return tools
}

const readFileSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "file path relative to the root folder"},
    "offset": {"type": "integer", "minimum": 1, "maximum": 1000000000, "description": "first line to return, counted from 1 (default 1)"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000000, "description": "most lines to return (default 2000)"}
  },
  "required": ["path"],
  "additionalProperties": false
}`

const listDirSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "folder path relative to the root folder (default \".\")"}
  },
  "additionalProperties": false
}`

// readFile is read_file: lines [offset, offset+limit) of the first
// readCap bytes of a regular file.
func (s *sandbox) readFile(ctx context.Context, args map[string]any) (string, error) {
	var a struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := executor.DecodeArgs(args, &a); err != nil {
		return "", err
	}
	if a.Offset < 1 {
		a.Offset = 1
	}
	if a.Limit < 1 {
		a.Limit = defaultReadLines
	}
	r, err := s.open()
	if err != nil {
		return "", err
	}
	rel, err := s.path(ctx, r, a.Path)
	if err != nil {
		return "", err
	}
	f, fi, err := s.openRegular(r, a.Path, rel)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := readCapped(ctx, f, s.readCap+1)
	if cerr := ctx.Err(); cerr != nil {
		return "", cerr
	}
	if err != nil {
		return "", fsError(a.Path, err)
	}
	capped := int64(len(data)) > s.readCap
	if capped {
		data = data[:s.readCap]
	}
	size := max(fi.Size(), int64(len(data)))
	if bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
		return fmt.Sprintf("%s is a binary file (%d bytes); read_file shows text only", a.Path, size), nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	of := fmt.Sprint(len(lines))
	if capped {
		of = fmt.Sprintf("at least %d", len(lines))
	}
	start := a.Offset - 1
	if start >= len(lines) {
		if len(lines) == 0 && !capped {
			return "", nil // an empty file
		}
		msg := fmt.Sprintf("[%s has %s lines; offset %d is past the end]", a.Path, of, a.Offset)
		if capped {
			executor.MarkTruncated(ctx)
			msg = fmt.Sprintf("[%s is %d bytes and only its first %d bytes can be read (%d lines); offset %d is past them]",
				a.Path, size, s.readCap, len(lines), a.Offset)
		}
		return msg, nil
	}
	end := start + min(a.Limit, len(lines)-start) // never start+a.Limit: it can overflow
	out := strings.Join(lines[start:end], "")
	if end < len(lines) {
		out = appendNote(out, fmt.Sprintf("[lines %d-%d of %s shown; call read_file with offset=%d for more]", start+1, end, of, end+1))
	} else if capped {
		executor.MarkTruncated(ctx)
		out = appendNote(out, fmt.Sprintf("[truncated: %s is %d bytes; only the first %d bytes are read]", a.Path, size, s.readCap))
	}
	return out, nil
}

// readChunk is how much readCapped reads between checks of the context.
const readChunk = 256 << 10

// readCapped reads at most n bytes of r, checking ctx between chunks of
// readChunk bytes. Its error is ctx's once ctx is done.
func readCapped(ctx context.Context, r io.Reader, n int64) ([]byte, error) {
	var buf bytes.Buffer
	for int64(buf.Len()) < n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := io.CopyN(&buf, r, min(readChunk, n-int64(buf.Len())))
		if err == io.EOF || (err == nil && m == 0) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// listDir is list_dir.
func (s *sandbox) listDir(ctx context.Context, args map[string]any) (string, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := executor.DecodeArgs(args, &a); err != nil {
		return "", err
	}
	if a.Path == "" {
		a.Path = "."
	}
	r, err := s.open()
	if err != nil {
		return "", err
	}
	rel, err := s.path(ctx, r, a.Path)
	if err != nil {
		return "", err
	}
	fi, err := r.Stat(rel)
	if err != nil {
		return "", fsError(a.Path, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%q is %s, not a folder; list_dir lists folders (read_file reads files)", a.Path, words.FileKind(fi.Mode()))
	}
	d, err := r.Open(rel)
	if err != nil {
		return "", fsError(a.Path, err)
	}
	defer d.Close()
	entries, err := d.ReadDir(maxWalkEntries)
	if err != nil && err != io.EOF {
		return "", fsError(a.Path, err)
	}
	more := len(entries) == maxWalkEntries
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	if len(entries) == 0 {
		return fmt.Sprintf("(%s is an empty folder)", a.Path), nil
	}
	var b strings.Builder
	for i, en := range entries {
		if i == maxListEntries {
			more = true
			break
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		b.WriteString(en.Name())
		switch t := en.Type(); {
		case t.IsDir():
			b.WriteString("/")
		case t&fs.ModeSymlink != 0:
			b.WriteString("@")
		case t&fs.ModeNamedPipe != 0:
			b.WriteString("|")
		case t&fs.ModeSocket != 0:
			b.WriteString("=")
		case t.IsRegular():
			if info, err := en.Info(); err == nil {
				fmt.Fprintf(&b, " (%d bytes)", info.Size())
			}
		}
		b.WriteString("\n")
	}
	out := b.String()
	if more {
		executor.MarkTruncated(ctx)
		out = appendNote(out, fmt.Sprintf("[truncated: only the first %d entries by name are shown]", min(len(entries), maxListEntries)))
	}
	return out, nil
}
