package intent

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

const hexDigits = "0123456789abcdef"

// appendString writes s (valid UTF-8) as a JSON string, escaping only '"',
// '\' and control characters (as \b \f \n \r \t or \u00XX).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
