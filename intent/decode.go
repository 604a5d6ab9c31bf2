package intent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// MaxDepth is the deepest nesting of JSON arrays and objects that Parse,
// FromToolCalls, Key and Canonical accept; deeper input is [ErrMalformed].
// It bounds recursion, so no reply can exhaust the stack.
const MaxDepth = 512

// syntaxError is a JSON decoding failure at a byte offset of the decoded
// text. It is wrapped in ErrMalformed by the callers.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.off) }

// decodeJSON decodes s, which must hold exactly one JSON value (RFC 8259)
// surrounded by optional white space, into the value types documented on
// Output (numbers as canonical json.Number text). It reads with jsontext,
// strictly as ErrMalformed says, in time linear in its input and at most
// MaxDepth levels deep.
func decodeJSON(s string) (any, error) {
	d := jsontext.NewDecoder(strings.NewReader(s))
	v, err := decodeValue(d, 0)
	if err == nil {
		at := int(d.InputOffset())
		if _, err = d.ReadToken(); err == io.EOF {
			return v, nil
		}
		for at < len(s) && isSpace(s[at]) {
			at++
		}
		return nil, &syntaxError{off: at, msg: "unexpected data after the JSON value"}
	}
	var se *jsontext.SyntacticError
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, &syntaxError{off: len(s), msg: "unexpected end of input"}
	case errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName):
		return nil, &syntaxError{off: int(se.ByteOffset), msg: fmt.Sprintf("duplicate object key %q", se.JSONPointer.LastToken())}
	case errors.As(err, &se):
		return nil, &syntaxError{off: int(se.ByteOffset), msg: strings.TrimPrefix(se.Err.Error(), "jsontext: ")}
	}
	return nil, err
}

// decodeValue reads the next value of d, depth levels down.
func decodeValue(d *jsontext.Decoder, depth int) (any, error) {
	at := int(d.InputOffset())
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		c, err := canonicalNumber(tok.String())
		if err != nil {
			return nil, &syntaxError{off: at, msg: err.Error()}
		}
		return json.Number(c), nil
	}
	if depth++; depth > MaxDepth {
		return nil, &syntaxError{off: at, msg: fmt.Sprintf("nesting deeper than %d", MaxDepth)}
	}
	if tok.Kind() == '[' {
		a := []any{}
		for d.PeekKind() != ']' {
			v, err := decodeValue(d, depth)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = d.ReadToken()
		return a, err
	}
	m := map[string]any{}
	for d.PeekKind() != '}' {
		k, err := d.ReadToken()
		if err != nil {
			return nil, err
		}
		key := k.String() // before the next read voids k
		v, err := decodeValue(d, depth)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
	_, err = d.ReadToken()
	return m, err
}
