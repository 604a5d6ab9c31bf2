package intent

import "github.com/go-json-experiment/json/jsontext"

// appendForm writes the canonical JSON text of f: the Value alone, or an
// object holding the Value's members and "tool_intent", keys sorted.
func appendForm(b []byte, f *form) []byte {
	if !f.HasIntent {
		return appendNode(b, &f.Value)
	}
	b = append(b, '{')
	first, intentDone := true, false
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	writeIntent := func() {
		sep()
		b = appendString(b, keyToolIntent)
		b = append(b, `:{"args":`...)
		b = appendNode(b, &f.Args)
		b = append(b, `,"tool":`...)
		b = appendString(b, f.Tool)
		b = append(b, '}')
		intentDone = true
	}
	if f.HasValue {
		for i, k := range f.Value.Keys {
			if !intentDone && k > keyToolIntent {
				writeIntent()
			}
			sep()
			b = appendString(b, k)
			b = append(b, ':')
			b = appendNode(b, &f.Value.Items[i])
		}
	}
	if !intentDone {
		writeIntent()
	}
	return append(b, '}')
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
