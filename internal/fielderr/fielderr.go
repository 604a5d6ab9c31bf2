// Package fielderr is mdap's one configuration error: the refused fields
// of a configuration, their values, and how to fix them. Every library
// configuration (sim.Config, simserver.Faults, batch.LimitConfig,
// mcpserver.Config, ...) validates itself and reports with it, so that a
// caller that sets the fields from its own settings (the command's flags)
// maps each field back to its setting and says the library's fix in its
// own terms, without a second copy of the rules.
//
// It imports nothing of mdap, so every package may use it. Its type is
// exported to library users as sim.FieldError and maker.FieldError
// (aliases of [Error]).
package fielderr

import (
	"errors"
	"fmt"
	"strings"
)

// ErrConfig is the one sentinel of a refused configuration: every
// package's ErrConfig is this value, so errors.Is(err, pkg.ErrConfig)
// holds for a configuration error of any package; the error's text (and
// [Error.Config]) says which configuration refused it.
var ErrConfig = errors.New("invalid configuration")

// Error is a refused configuration: the fields at fault with their values,
// and how to fix them. It wraps [ErrConfig], or Err when set.
type Error struct {
	// Err is the sentinel the error wraps and its text begins with; nil
	// is [ErrConfig].
	Err error
	// Config names the configuration, where the error comes from
	// ("mcpserver.Config"); empty leaves it out of the text.
	Config string
	// Fields are the fields at fault: one, or those whose combination is
	// refused, in the order the text names them. A Name is the Go name of
	// the field in its configuration ("P", "Drift[0].Step",
	// "Latency.Median").
	Fields []Field
	// Fix says what the fields must be, as a clause that follows the
	// fields and their values: "use a probability 0 to 1", "must add up
	// to at most 1".
	Fix string
	// Cause is the error that refused the fields, when another check
	// did (a model spec's parser): errors.Is finds it too, and an empty
	// Fix reads as its text.
	Cause error
	// Clause, when set, says what is wrong as a clause whose subject is
	// the fields, in place of their values and Fix: "needs Path FILE: the
	// journal of the run to resume" reads "Resume needs Path FILE: ...".
	Clause string
}

// Field is one field of an [Error] and its refused value.
type Field struct {
	Name  string
	Value any
}

// New is an Error of one field of config, wrapping [ErrConfig].
func New(config, name string, value any, fix string) *Error {
	return &Error{Config: config, Fields: []Field{{name, value}}, Fix: fix}
}

// Error reads "invalid configuration: sim.Config: FlagRate = 0.7 plus
// ErrorRate = 0.7: must add up to at most 1" (without "sim.Config: " when
// Config is empty), or with a Clause "invalid configuration:
// runsetup.Journal: Resume needs Path FILE: ...".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.sentinel().Error())
	if e.Config != "" {
		b.WriteString(": " + e.Config)
	}
	for i, f := range e.Fields {
		sep := ": "
		if i > 0 {
			sep = " plus "
		}
		if b.WriteString(sep + f.Name); e.Clause == "" {
			fmt.Fprintf(&b, " = %v", f.Value)
		}
	}
	if e.Clause != "" {
		return b.String() + " " + e.Clause
	}
	return b.String() + ": " + e.Remedy()
}

// Remedy is how to fix the fields: Fix, or Cause's text when Fix is empty.
func (e *Error) Remedy() string {
	if e.Fix == "" && e.Cause != nil {
		return e.Cause.Error()
	}
	return e.Fix
}

// Unwrap returns Err, or [ErrConfig] when Err is nil, and Cause when set.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.sentinel(), e.Cause}
	}
	return []error{e.sentinel()}
}

func (e *Error) sentinel() error {
	if e.Err != nil {
		return e.Err
	}
	return ErrConfig
}

// Of is an Error of one field of config refused by cause, whose text is
// the fix.
func Of(config, name string, value any, cause error) *Error {
	return &Error{Config: config, Fields: []Field{{name, value}}, Cause: cause}
}

// As returns the *Error err holds, or nil.
func As(err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}
