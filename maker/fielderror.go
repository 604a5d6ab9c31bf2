package maker

import "github.com/mdap-go/mdap/internal/fielderr"

// FieldError is mdap's one configuration error: the refused fields of a
// configuration (its Config names which: "sim.Config",
// "batch.LimitConfig", "mcpserver.Config", ...), their values, and how to
// fix them. Find it in an error with [errors.As]; it wraps [ErrConfig],
// which is every package's ErrConfig. A caller that sets the fields from
// its own settings (a command's flags) maps each field's Name back to its
// setting, without a second copy of the rules. sim.FieldError is the same
// type.
type FieldError = fielderr.Error
