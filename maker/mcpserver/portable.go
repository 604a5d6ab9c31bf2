package mcpserver

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// portable rewrites a tool schema inferred from a Go type into the form
// strict clients accept (MCP Inspector's portability check): a sub-schema
// that admits any value (a Go `any`, inferred as the bare schema true)
// becomes an object schema that says so, and, in an input schema, a type
// list of a value and null (a Go slice, map or pointer) becomes the value's
// type alone, since an argument is left out rather than sent as null. It
// changes sch in place; what it admits changes only by refusing null
// arguments.
func portable(sch *jsonschema.Schema, input bool) {
	walk(sch, func(s *jsonschema.Schema) {
		if input && len(s.Types) == 2 && slices.Contains(s.Types, "null") {
			s.Type = s.Types[0]
			if s.Type == "null" {
				s.Type = s.Types[1]
			}
			s.Types = nil
		}
		for _, c := range children(s) {
			if c != nil && isTrue(c) {
				c.Description = "any JSON value"
			}
		}
	})
}

// isTrue reports whether s is the schema that admits every value.
func isTrue(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == "true"
}

// walk calls f on s and on every schema below it, parents first.
func walk(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	if s == nil {
		return
	}
	f(s)
	for _, c := range children(s) {
		walk(c, f)
	}
}

// children are the schemas directly below s, but for its "not": the
// schema false is {"not": true}, and must stay false.
func children(s *jsonschema.Schema) []*jsonschema.Schema {
	cs := []*jsonschema.Schema{s.Items, s.AdditionalProperties, s.Contains, s.PropertyNames, s.AdditionalItems, s.UnevaluatedItems, s.UnevaluatedProperties}
	cs = append(cs, s.PrefixItems...)
	cs = append(cs, s.AnyOf...)
	cs = append(cs, s.OneOf...)
	cs = append(cs, s.AllOf...)
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		cs = append(cs, s.Properties[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Defs)) {
		cs = append(cs, s.Defs[k])
	}
	return cs
}
