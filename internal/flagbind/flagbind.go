// Package flagbind registers a command's flags from the configuration
// struct they set: a field tagged `flag:"NAME"` (with its help in a
// `usage:"..."` tag) is a flag whose default is the field's value when it
// is bound. The flag's name then lives once, beside the field, and the
// field errors of the configuration (fielderr.Error, fielderr.InFlags) map
// back to the flags through the names Bind returns, with no second table
// to keep in step.
//
// A library keeps only the tags (strings: it imports nothing of the
// command line); the command decides which configurations it binds. A
// library such as github.com/alecthomas/kong or
// github.com/jessevdk/go-flags owns the whole command line; this one adds
// flags to cobra's pflag set, among the hand-registered ones, and reads
// nothing else.
//
// A configuration made of sub-configurations marks each one whose flags
// it holds with a `flags:"PREFIX"` tag on the struct field: its tagged
// fields (and its groups', to any depth) are bound with the rest, named
// PREFIX followed by their own name ("Caps." gives "Caps.MaxDepth"; ""
// names them as the sub-configuration's own Validate does). An unmarked
// struct field is left alone, so that a command may bind it by itself.
// A usage tag may hold run-time parts, {KEY}, that Usage fills: the
// model specs a build knows, the families it has.
package flagbind

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"time"

	"github.com/spf13/pflag"
)

// Bind registers on fs a flag for each field of the struct cfg points to
// that has a `flag` tag, its usage the field's `usage` tag and its default
// the field's value now; the fields of an embedded struct are bound as
// the struct's own, and those of a struct field tagged `flags:"PREFIX"`
// (a group) named PREFIX+NAME. It returns the flag of each bound field by
// the field's name, as the configuration's Validate names it in a field
// error. Bind is Usage(nil).Bind: a usage tag holding a {KEY} panics.
//
// The field types it binds: a string (or a type whose underlying type is
// string), bool, int, int32, int64, uint64, float64, time.Duration,
// []string (repeatable: each value once, none split at commas),
// map[string]int and map[string]string (KEY=VALUE[,KEY=VALUE]), and a
// type whose pointer is a flag value (Set, String and Type, as
// pflag.Value: its own syntax, its default its String now). A tagged
// field of another type, or cfg not a pointer to a struct, is a
// programming error: Bind panics, as pflag does on a flag defined twice.
func Bind(fs *pflag.FlagSet, cfg any) map[string]string {
	return Usage(nil).Bind(fs, cfg)
}

// Usage holds the run-time parts of usage tags by KEY: a tag's {KEY}
// (KEY a letter, then letters, digits, - or _) is replaced by u[KEY] in
// the flag's help. Other braces, such as a JSON example's, are kept.
type Usage map[string]string

// Bind is the package's Bind with the {KEY}s of the usage tags filled from
// u. A {KEY} that u does not hold is a programming error (the help would
// show it): Bind panics, naming the flag and the KEY, before registering
// that flag.
func (u Usage) Bind(fs *pflag.FlagSet, cfg any) map[string]string {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("flagbind: %T is not a pointer to a struct", cfg))
	}
	names := map[string]string{}
	bind(fs, v.Elem(), "", u, names)
	return names
}

// placeholder is a {KEY} of a usage tag.
var placeholder = regexp.MustCompile(`\{[A-Za-z][A-Za-z0-9_-]*\}`)

// fill is usage with its {KEY}s from u; it panics on a KEY u lacks.
func (u Usage) fill(flag, usage string) string {
	return placeholder.ReplaceAllStringFunc(usage, func(m string) string {
		part, ok := u[m[1:len(m)-1]]
		if !ok {
			panic(fmt.Sprintf("flagbind: --%s: the usage's %s is not in Usage", flag, m))
		}
		return part
	})
}

// Names is the flag of each field of each of cfgs (a struct, or a pointer
// to one) that Bind would bind, by the field's name (a group's fields by
// their PREFIX+NAME), without binding any,
// beside a copy of more (the flags of fields a command sets by hand; a
// tag's name wins).
func Names(more map[string]string, cfgs ...any) map[string]string {
	names := maps.Clone(more)
	if names == nil {
		names = map[string]string{}
	}
	for _, cfg := range cfgs {
		bind(nil, reflect.New(reflect.Indirect(reflect.ValueOf(cfg)).Type()).Elem(), "", nil, names)
	}
	return names
}

// bind binds the tagged fields of the struct v on fs (none when fs is nil)
// and adds their flags to names, each field's name after prefix.
func bind(fs *pflag.FlagSet, v reflect.Value, prefix string, u Usage, names map[string]string) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, tagged := f.Tag.Lookup("flag")
		group, grouped := f.Tag.Lookup("flags")
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Struct && !tagged: // its exported fields are promoted
			bind(fs, v.Field(i), prefix, u, names)
		case !f.IsExported():
		case grouped && f.Type.Kind() == reflect.Struct:
			bind(fs, v.Field(i), prefix+group, u, names)
		case tagged && fs == nil:
			names[prefix+f.Name] = name
		case tagged:
			define(fs, v.Field(i).Addr(), name, u.fill(name, f.Tag.Get("usage")))
			names[prefix+f.Name] = name
		}
	}
}

// define registers the flag name over the field p points to.
func define(fs *pflag.FlagSet, p reflect.Value, name, usage string) {
	switch q := p.Interface().(type) {
	case pflag.Value:
		fs.Var(q, name, usage)
	case *time.Duration:
		fs.DurationVar(q, name, *q, usage)
	case *bool:
		fs.BoolVar(q, name, *q, usage)
	case *int:
		fs.IntVar(q, name, *q, usage)
	case *int32:
		fs.Int32Var(q, name, *q, usage)
	case *int64:
		fs.Int64Var(q, name, *q, usage)
	case *uint64:
		fs.Uint64Var(q, name, *q, usage)
	case *float64:
		fs.Float64Var(q, name, *q, usage)
	case *[]string:
		fs.StringArrayVar(q, name, *q, usage)
	case *map[string]int:
		fs.StringToIntVar(q, name, *q, usage)
	case *map[string]string:
		fs.StringToStringVar(q, name, *q, usage)
	default:
		if p.Elem().Kind() != reflect.String {
			panic(fmt.Sprintf("flagbind: --%s: cannot bind a field of type %s", name, p.Elem().Type()))
		}
		s := p.Convert(reflect.TypeFor[*string]()).Interface().(*string)
		fs.StringVar(s, name, *s, usage)
	}
}
