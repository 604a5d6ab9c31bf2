package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/tmc/langchaingo/llms/openai"
)

// Structured output through langchaingo v0.1.14:
//
//   - openai: openai.WithResponseFormat sends response_format {"type":
//     "json_schema", ...}, but per client, not per call, and its schema
//     type (openai.ResponseFormatJSONSchemaProperty) holds only type,
//     description, enum, items, properties, required and
//     additionalProperties (always written, as false). So the schema is
//     converted: validation keywords it cannot hold (minItems, maxItems,
//     minimum, maximum, pattern, ...) are dropped, since the task's Decode
//     checks them anyway; a schema whose structure it cannot hold (anyOf,
//     oneOf, allOf, $ref, prefixItems, a list of types,
//     additionalProperties other than false) is not sent, and the call's
//     llms.WithJSONMode asks for a JSON object instead.
//   - ollama: langchaingo's format is a string ("json"), and Ollama refuses
//     a schema sent as a string, so the transport puts the schema itself
//     in the request's "format" field.
//   - anthropic: no structured output in langchaingo; the schema is not
//     sent.

// droppedKeywords are the validation keywords the conversion drops.
var droppedKeywords = []string{
	"$schema", "$id", "title", "default", "examples", "format",
	"minItems", "maxItems", "uniqueItems", "minLength", "maxLength", "pattern",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"minProperties", "maxProperties",
}

// responseFormat converts a JSON Schema into langchaingo's response
// format, or says why it cannot. Strict is set when every object lists
// all its properties as required, as OpenAI's strict mode demands.
func responseFormat(schema []byte) (*openai.ResponseFormat, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	strict := true
	p, err := convert(v, "", &strict)
	if err != nil {
		return nil, err
	}
	if p.Type != "object" {
		return nil, errors.New("response_format wants an object schema")
	}
	return &openai.ResponseFormat{Type: "json_schema", JSONSchema: &openai.ResponseFormatJSONSchema{Name: "answer", Strict: strict, Schema: p}}, nil
}

func convert(v any, at string, strict *bool) (*openai.ResponseFormatJSONSchemaProperty, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema%s is not an object", at)
	}
	p := &openai.ResponseFormatJSONSchemaProperty{}
	for k, val := range m {
		switch k {
		case "type":
			s, ok := val.(string)
			if !ok {
				return nil, fmt.Errorf("schema%s: a list of types", at)
			}
			p.Type = s
		case "description":
			p.Description, _ = val.(string)
		case "enum":
			list, ok := val.([]any)
			if !ok {
				return nil, fmt.Errorf("schema%s: enum is not a list", at)
			}
			p.Enum = list
		case "const":
			p.Enum = []any{val}
		case "items":
			item, err := convert(val, at+".items", strict)
			if err != nil {
				return nil, err
			}
			p.Items = item
		case "properties":
			props, ok := val.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("schema%s: properties is not an object", at)
			}
			p.Properties = make(map[string]*openai.ResponseFormatJSONSchemaProperty, len(props))
			for name, sub := range props {
				c, err := convert(sub, at+"."+name, strict)
				if err != nil {
					return nil, err
				}
				p.Properties[name] = c
			}
		case "required":
			list, ok := val.([]any)
			if !ok {
				return nil, fmt.Errorf("schema%s: required is not a list", at)
			}
			for _, r := range list {
				s, ok := r.(string)
				if !ok {
					return nil, fmt.Errorf("schema%s: required holds a non-string", at)
				}
				p.Required = append(p.Required, s)
			}
		case "additionalProperties":
			if b, ok := val.(bool); !ok || b {
				return nil, fmt.Errorf("schema%s: additionalProperties other than false", at)
			}
		default:
			if !slices.Contains(droppedKeywords, k) {
				return nil, fmt.Errorf("schema%s: %s cannot be sent through langchaingo", at, k)
			}
		}
	}
	if p.Type == "" && p.Enum == nil {
		return nil, fmt.Errorf("schema%s has no type", at)
	}
	for name := range p.Properties {
		if !slices.Contains(p.Required, name) {
			*strict = false
		}
	}
	return p, nil
}
