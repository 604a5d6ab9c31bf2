package fielderr

import (
	"fmt"
	"regexp"
	"strings"
)

// InFlags says the refused fields of err's [Error] as the command-line
// flags that set them, with their values and the error's remedy:
// "--p 1.5: use a probability above 0, up to 1", "--a 1 plus --b 2: must
// add up to at most 1". flagOf names the flag of each field; a field of a
// list or map ("Models[1]") is named by its own entry or else by the
// list's ("Models"). A string value is quoted, and a remedy that begins
// with the first value quoted says it once; a nil value names the flag
// alone ("--structured: ..."). A field the remedy names beside the first
// field of the same config ("use Floor (4) to 1000" of "AdaptiveK.Max") is
// said as its flag too ("use --k-floor (4) to 1000"), so that the text
// reads in flags throughout. A Clause follows the flags, its fields said
// as flags too: "--resume needs --journal FILE: ...".
//
// ok is false, and the text empty, when err holds no Error or names a
// field flagOf does not: the caller then says err its own way. Cost:
// linear in the fields.
func InFlags(err error, flagOf map[string]string) (text string, ok bool) {
	fe := As(err)
	if fe == nil || len(fe.Fields) == 0 {
		return "", false
	}
	parts := make([]string, 0, len(fe.Fields))
	for _, x := range fe.Fields {
		name, known := flagOf[x.Name]
		if field, _, _ := strings.Cut(x.Name, "["); !known {
			name, known = flagOf[field]
		}
		if !known {
			return "", false
		}
		switch x.Value.(type) {
		case nil:
			parts = append(parts, "--"+name)
		case string:
			parts = append(parts, fmt.Sprintf("--%s %q", name, x.Value))
		default:
			parts = append(parts, fmt.Sprintf("--%s %v", name, x.Value))
		}
	}
	if fe.Clause != "" {
		return strings.Join(parts, " plus ") + " " + siblingsInFlags(fe.Clause, fe.Fields[0].Name, flagOf), true
	}
	remedy := fe.Remedy()
	if v, isString := fe.Fields[0].Value.(string); isString {
		remedy = strings.TrimPrefix(remedy, fmt.Sprintf("%q: ", v))
	}
	return strings.Join(parts, " plus ") + ": " + siblingsInFlags(remedy, fe.Fields[0].Name, flagOf), true
}

// fieldWord is a word that may name a field: an exported Go name, or a
// path of them ("Vote.K").
var fieldWord = regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9]*)*\b`)

// siblingsInFlags replaces in remedy each word that names a field flagOf
// names, by its path or as a field of field's own config (the same path
// up to its last dot), with that flag, unless the remedy names the flag
// already ("MaxRoutes, maker nats --max-routes").
func siblingsInFlags(remedy, field string, flagOf map[string]string) string {
	prefix := ""
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		prefix = field[:i+1]
	}
	return fieldWord.ReplaceAllStringFunc(remedy, func(w string) string {
		name, ok := flagOf[w]
		if !ok && !strings.Contains(w, ".") {
			name, ok = flagOf[prefix+w]
		}
		if ok && !strings.Contains(remedy, "--"+name) {
			return "--" + name
		}
		return w
	})
}
