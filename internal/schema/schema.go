// Package schema compiles JSON Schemas from their own text only: every
// external $ref (a file, a URL) is refused, so what a schema accepts never
// depends on the disk or the network. It is the one place where the
// executor (tool argument schemas) and task specs (answer contracts)
// compile schemas.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Sentinel errors, for errors.Is. Every error of this package wraps one.
var (
	// ErrNotJSON: the schema's text is empty or not one JSON value.
	ErrNotJSON = errors.New("schema is not JSON")
	// ErrInvalid: the schema is JSON but does not compile as a JSON Schema
	// (a bad keyword value, an external or unresolvable $ref).
	ErrInvalid = errors.New("not a valid JSON Schema")
)

// Decode decodes raw as one JSON value with [encoding/json.Number] numbers,
// the form [CompileDoc] takes. Errors wrap [ErrNotJSON]. Cost: one decode
// of raw.
func Decode(raw []byte) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrNotJSON)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotJSON, err)
	}
	return doc, nil
}

// CompileDoc compiles doc (a value returned by [Decode]) as a JSON Schema,
// draft 2020-12 unless the schema says otherwise with $schema. name places
// the schema at mem:///NAME.json, which compile errors cite; it may contain
// slashes ("tools/read_file"). Every external $ref is refused. Errors wrap
// [ErrInvalid]. Safe for concurrent use: each call has its own compiler.
func CompileDoc(name string, doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	loc := (&url.URL{Scheme: "mem", Path: "/" + name + ".json"}).String()
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return sch, nil
}

// Compile is [Decode] then [CompileDoc]. Errors wrap [ErrNotJSON] or
// [ErrInvalid].
func Compile(name string, raw []byte) (*jsonschema.Schema, error) {
	doc, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	return CompileDoc(name, doc)
}

// refuseLoader refuses every external $ref.
type refuseLoader struct{}

func (refuseLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not allowed: a schema is compiled from its own text only", u)
}
