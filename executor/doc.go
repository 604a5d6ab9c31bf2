// Package executor runs the one tool call that won a step's vote, after
// checking that it may run.
//
// # Contract
//
// Nothing runs unless the tool is registered, the [categories.Policy]
// allows it and its arguments validate against the tool's JSON Schema.
// Every refusal is an [intent.Observation] (Status [intent.StatusDenied])
// worded for the model that reads the next prompt, never a Go error and
// never a crash: an unknown tool lists the tools that can be called, a
// withheld tool names its category and how an operator allows it, invalid
// arguments list their problems at once (see Limits). [Executor.Execute]
// returns a non-nil error only when the caller's context is cancelled.
//
// The order of checks is fixed: name ([intent.ReasonUnknownTool],
// [intent.ReasonUnavailable]), then policy ([intent.ReasonNotAllowed]),
// then arguments ([intent.ReasonInvalidArgs]); only then does the tool run
// (see [Executor.Execute]).
//
// # Limits
//
// Every input is bounded before anything runs, whatever a model proposes:
// the tool name, the number, depth, values and size of the arguments, and
// paths (limits.go's constants; the built-in tools' schemas bound their
// strings, lists and numbers). Every observation, denials included, carries
// at most the output cap ([WithOutputCap]) of content plus a one-line
// truncation note; an invalid-arguments denial lists at most [MaxProblems]
// problems, in a deterministic order, and counts the rest. Time is bounded
// too: see [Executor.Execute].
//
// # Tools
//
// A [Tool] has a name, a category, a description and a JSON Schema for its
// arguments, compiled once by [Executor.Register]. Before validation,
// arguments are normalised through a JSON round trip (so float64,
// json.Number and Go integers all validate alike) and healed against the
// schema: a value that arrives as a string although its schema wants an
// array, object, number, integer or boolean, and that string holds exactly
// such JSON, is decoded ("[\"a\",\"b\"]" becomes ["a","b"], "3" becomes
// 3), at any depth and in array items. Anything else is left alone and
// fails validation honestly. [Executor.Normalize] does it alone, so that
// samples proposing the same call in different spellings vote together.
//
// # File tools
//
// The built-in file tools (read_file, list_dir, glob, grep, write_file)
// and their sandbox over a root folder are package executor/fstools: a
// [Workspace] given with [WithWorkspace] (fstools.New opens the folder and
// builds the executor).
//
// # The index tool
//
// [categories.IndexTool] (list_tool_categories) belongs to no category and
// no policy can withhold it: it returns, as JSON, the [categories.Inventory] of
// this executor (what is loaded, withheld or unavailable, and how to ask for
// more).
//
// # Declaring tools to a model
//
// [DescribeTools] renders a declaration as the compact, stable text a
// prompt carries for a model without native tools. Which tools to declare
// (the loaded ones, the ones a spec names, with descriptions from skill
// files) is package executor/declare. Declaring a tool is not permitting
// it: Execute checks the policy again.
package executor
