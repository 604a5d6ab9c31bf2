package mcpserver

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// portable rewrites a tool schema inferred from a Go type into the form
// strict clients accept (MCP Inspector's portability check, --strict):
// no type lists and no sub-schema that constrains nothing. A type list of
// a value and null (a Go slice, map or pointer) becomes, in an input
// schema, the value's type alone, since an argument is left out rather
// than sent as null, and in an output schema anyOf a null branch and the
// value's; a sub-schema that admits any value (a Go `any`, inferred as the
// bare schema true) becomes anyOf the six JSON types, which admits the
// same and says so. It changes sch in place; what it admits changes only
// by refusing null arguments.
func portable(sch *jsonschema.Schema, input bool) {
	walk(sch, func(s *jsonschema.Schema) {
		if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
			value := s.Types[0]
			if value == "null" {
				value = s.Types[1]
			}
			if input {
				s.Type, s.Types = value, nil
			} else {
				branch := *s
				branch.Type, branch.Types, branch.Description = value, nil, ""
				*s = jsonschema.Schema{Description: s.Description, AnyOf: []*jsonschema.Schema{{Type: "null"}, &branch}}
			}
		}
		for _, c := range children(s) {
			if c != nil && anyValue(c) {
				c.AnyOf = jsonTypes()
				if c.Description == "" {
					c.Description = "any JSON value"
				}
			}
		}
	})
}

// anyValue reports whether s admits every value: the bare schema true,
// or one that says nothing but a description.
func anyValue(s *jsonschema.Schema) bool {
	d := *s
	d.Description = ""
	return isTrue(&d)
}

// jsonTypes is anyOf the six JSON types: every value, declared.
func jsonTypes() []*jsonschema.Schema {
	var ts []*jsonschema.Schema
	for _, t := range []string{"object", "array", "string", "number", "boolean", "null"} {
		ts = append(ts, &jsonschema.Schema{Type: t})
	}
	return ts
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
