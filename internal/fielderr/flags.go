package fielderr

import (
	"fmt"
	"strings"
)

// InFlags says the refused fields of err's [Error] as the command-line
// flags that set them, with their values and the error's remedy:
// "--p 1.5: use a probability above 0, up to 1", "--a 1 plus --b 2: must
// add up to at most 1". flagOf names the flag of each field; a field of a
// list or map ("Models[1]") is named by its own entry or else by the
// list's ("Models"). A string value is quoted, and a remedy that begins
// with the first value quoted says it once; a nil value names the flag
// alone ("--structured: ...").
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
	remedy := fe.Remedy()
	if v, isString := fe.Fields[0].Value.(string); isString {
		remedy = strings.TrimPrefix(remedy, fmt.Sprintf("%q: ", v))
	}
	return strings.Join(parts, " plus ") + ": " + remedy, true
}
