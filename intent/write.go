package intent

import (
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// appendForm writes the canonical JSON text of f: the Value alone, or an
// object holding the Value's members and "tool_intent", keys sorted.
func appendForm(b []byte, f *form) []byte {
	if !f.HasIntent {
		return appendNode(b, &f.Value)
	}
	in := node{Kind: kindObject, Keys: []string{"args", "tool"}, Items: []node{f.Args, {Kind: kindString, Str: f.Tool}}}
	v := f.Value // an object without "tool_intent" (canonicalForm), or none
	i, _ := slices.BinarySearch(v.Keys, keyToolIntent)
	obj := node{Kind: kindObject, Keys: slices.Concat(v.Keys[:i], []string{keyToolIntent}, v.Keys[i:]),
		Items: slices.Concat(v.Items[:i], []node{in}, v.Items[i:])}
	return appendNode(b, &obj)
}

// appendNode writes the canonical JSON text of n.
func appendNode(b []byte, n *node) []byte {
	switch n.Kind {
	case kindNull:
		return append(b, "null"...)
	case kindFalse:
		return append(b, "false"...)
	case kindTrue:
		return append(b, "true"...)
	case kindNumber:
		return append(b, n.Str...)
	case kindString:
		return appendString(b, n.Str)
	case kindArray:
		b = append(b, '[')
		for i := range n.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendNode(b, &n.Items[i])
		}
		return append(b, ']')
	default: // kindObject
		b = append(b, '{')
		for i, k := range n.Keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendNode(b, &n.Items[i])
		}
		return append(b, '}')
	}
}

// appendString writes s (valid UTF-8) as a JSON string, escaping only '"',
// '\' and control characters (as \b \f \n \r \t or \u00xx): RFC 8785's
// form, which jsontext.AppendQuote writes.
func appendString(b []byte, s string) []byte {
	b, _ = jsontext.AppendQuote(b, s) // s is valid UTF-8: no error
	return b
}
