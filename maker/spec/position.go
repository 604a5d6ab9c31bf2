package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// position says where in b a JSON decoding error happened, as "line L,
// column C" (both from 1; the column counts characters), from the
// error's own offset (a syntax or type error), the end (a text cut
// short), the unknown field's key, or else off, the decoder's offset when
// it stopped.
func position(b []byte, err error, off int64) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset - 1 // the offending character
	case errors.As(err, &typ):
		off = typ.Offset // just after the value of the wrong type
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(b))
	default:
		// An unknown field: its key, found in the text.
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			if i := bytes.Index(b, []byte(name+":")); i >= 0 {
				off = int64(i)
			} else if i := bytes.Index(b, []byte(name)); i >= 0 {
				off = int64(i)
			}
		}
	}
	off = min(max(off, 0), int64(len(b)))
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Sprintf("line %d, column %d", line, col)
}
