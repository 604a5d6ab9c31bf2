// Package frontmatter reads the front matter of a Markdown skill file:
// top-level "key: value" lines between two "---" lines.
package frontmatter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Parse parses the front matter of a Markdown file: the lines
// between a first line "---" and the next "---" (or "..."). It returns nil
// and no error when the file does not start with "---".
//
// It reads top-level "key: value" lines only, which is all a skill's
// front matter needs (name, description). It is not YAML: it accepts plain
// values that YAML refuses ("description: use it when: x") and refuses
// indented top-level keys that YAML accepts, which is why it is not
// go.yaml.in/yaml/v3. Values may be plain (a trailing " #" comment is
// dropped; indented lines that follow continue the value, joined by
// spaces), double-quoted (with JSON/Go escapes), single-quoted (two single
// quotes stand for one), or block scalars (| keeps line breaks, > folds them; chomping
// indicators are accepted and the result has no final newline). Indented
// lines and "- " items under a key with an empty value (nested YAML) are
// skipped; blank lines and "#" comments are ignored.
//
// Errors: the front matter is not closed; a top-level line is not "key:
// value"; a key repeats; a quoted value is not closed or has a bad escape.
// Every error names the line.
func Parse(b []byte) (map[string]string, error) {
	text := strings.ReplaceAll(string(bytes.TrimPrefix(b, []byte("\ufeff"))), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t") != "---" {
		return nil, nil
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, errors.New("front matter opened by --- on line 1 is never closed by ---")
	}
	out := map[string]string{}
	var key string  // the last key, for continuation lines
	var plain bool  // its value is plain and non-empty, so indented lines continue it
	var nested bool // its value is empty: indented lines are nested YAML, skipped
	for i := 1; i < end; i++ {
		line, n := lines[i], i+1
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' || strings.HasPrefix(line, "- ") || line == "-" {
			switch {
			case plain:
				out[key] += " " + stripComment(trimmed)
			case nested:
			default:
				return nil, fmt.Errorf("line %d: indented or list line %q belongs to no key", n, trimmed)
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || (v != "" && v[0] != ' ' && v[0] != '\t') {
			return nil, fmt.Errorf("line %d: want \"key: value\", got %q", n, line)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("line %d: key %q appears twice", n, k)
		}
		v = strings.TrimSpace(v)
		key, plain, nested = k, false, false
		switch {
		case v == "":
			nested = true
			out[k] = ""
		case v[0] == '"':
			s, err := unquoteDouble(v)
			if err != nil {
				return nil, fmt.Errorf("line %d: key %q: %v", n, k, err)
			}
			out[k] = s
		case v[0] == '\'':
			s, err := unquoteSingle(v)
			if err != nil {
				return nil, fmt.Errorf("line %d: key %q: %v", n, k, err)
			}
			out[k] = s
		case v[0] == '|' || v[0] == '>':
			if strings.Trim(stripComment(v)[1:], "+-0123456789") != "" {
				return nil, fmt.Errorf("line %d: key %q: bad block scalar header %q", n, k, v)
			}
			var block []string
			for i+1 < end && (strings.TrimSpace(lines[i+1]) == "" || lines[i+1][0] == ' ' || lines[i+1][0] == '\t') {
				i++
				block = append(block, lines[i])
			}
			out[k] = blockScalar(block, v[0] == '>')
		default:
			out[k] = stripComment(v)
			plain = true
		}
	}
	return out, nil
}

// stripComment drops a " #" comment from a plain value.
func stripComment(v string) string {
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

func unquoteDouble(v string) (string, error) {
	// Find the closing quote, skipping escaped characters.
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			if rest := strings.TrimSpace(v[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
				return "", fmt.Errorf("text %q after the closing quote", rest)
			}
			var s string
			if err := json.Unmarshal([]byte(v[:i+1]), &s); err != nil {
				u, uerr := strconv.Unquote(v[:i+1])
				if uerr != nil {
					return "", fmt.Errorf("bad escape in %s", v[:i+1])
				}
				s = u
			}
			return s, nil
		}
	}
	return "", fmt.Errorf("double-quoted value %s is not closed", v)
}

func unquoteSingle(v string) (string, error) {
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		if v[i] != '\'' {
			b.WriteByte(v[i])
			continue
		}
		if i+1 < len(v) && v[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		if rest := strings.TrimSpace(v[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
			return "", fmt.Errorf("text %q after the closing quote", rest)
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("single-quoted value %s is not closed", v)
}

// blockScalar joins a block scalar's lines after removing their common
// indentation: with line breaks (|) or folded into spaces (>), where a
// blank line stays a line break.
func blockScalar(lines []string, fold bool) string {
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	var parts []string
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			parts = append(parts, "")
			continue
		}
		parts = append(parts, strings.TrimRight(l[indent:], " \t"))
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if !fold {
		return strings.Join(parts, "\n")
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			if p == "" {
				b.WriteString("\n")
				continue
			}
			if parts[i-1] != "" {
				b.WriteString(" ")
			}
		}
		b.WriteString(p)
	}
	return b.String()
}
