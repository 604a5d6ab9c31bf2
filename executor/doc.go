// Package executor runs the one tool call that won a step's vote, after
// checking that it may run.
//
// # Contract
//
// Nothing runs unless the tool is registered, the [categories.Policy] allows
// it and its arguments validate against the tool's JSON Schema. Every refusal
// is an [intent.Observation] (Status [intent.StatusDenied]) worded for the model that reads
// the next prompt, never a Go error and never a crash: an unknown tool lists
// the tools that can be called, a withheld tool names its category and how an
// operator allows it, invalid arguments list their problems at once (see
// Limits).
// [Executor.Execute] returns a non-nil error only when the caller's context
// is cancelled.
//
// The order of checks is fixed: name ([intent.ReasonUnknownTool],
// [intent.ReasonUnavailable]), then policy ([intent.ReasonNotAllowed]), then arguments
// ([intent.ReasonInvalidArgs]); only then does the tool run, under a per-call
// timeout, with its panics recovered and its output capped.
//
// # Limits
//
// Every input is bounded before anything runs: a tool name of more than
// [MaxToolNameBytes] is an unknown tool (and the observation's Tool is cut
// to that length); more than [MaxArgs] arguments, arguments nested more than
// [MaxArgsDepth] deep, holding more than [MaxArgValues] values or larger
// than [DefaultArgsCap] bytes as JSON are invalid; a path of more than [MaxPathBytes] bytes or [MaxPathDepth]
// components is a bad path; the built-in tools' schemas bound their
// strings, lists and numbers. Every observation, denials included, carries
// at most the output cap ([WithOutputCap]) of content plus a one-line
// truncation note; an invalid-arguments denial lists at most [MaxProblems]
// problems, in a deterministic order (by location, array items by index),
// and counts the rest.
//
// Time is bounded too. The built-in tools run on the caller's goroutine and
// every inner loop checks the context or is bounded by construction: file
// reads go in chunks, walks and line scans check the context at each step,
// path resolution at each component; glob matching is linear (no
// backtracking on repeated "**"); grep refuses a regular expression whose
// program is too large and matches each line only up to a window inversely
// proportional to the program's size, saying so when a line is longer. A
// timed-out call of a built-in tool therefore returns soon after its
// timeout and leaves no goroutine running. Registered tools run on their
// own goroutine and may be abandoned; see [Executor.Execute].
//
// # Tools
//
// A [Tool] has a name, a category, a description and a JSON Schema for its
// arguments. Registering it ([Executor.Register]) compiles the schema once
// and keeps the executor's [categories.Taxonomy] total: a tool the taxonomy
// does not know is added to it; a tool it knows under another category, or a
// second tool of the same name, is refused.
//
// Before validation, arguments are normalised through a JSON round trip (so
// float64, json.Number and Go integers all validate alike) and healed
// against the schema: a value that arrives as a string although its schema
// wants an array, object, number, integer or boolean, and that string holds
// exactly such JSON, is decoded ("[\"a\",\"b\"]" becomes ["a","b"], "3"
// becomes 3). Anything else is left alone and fails validation honestly.
// Healing applies to properties at any depth and to array items.
//
// [Executor.Normalize] does the normalising and healing alone, without
// running anything, so that samples proposing the same call in different
// spellings get the same key and vote together; Execute of its result
// gives the observation Execute of the original would.
//
// # Built-in tools
//
// [New] with a non-empty root registers five tools over that folder:
// read_file and list_dir (category file_read), glob and grep (search), and
// write_file (file_write, which the default read-only policy withholds).
// Every path is relative to the root. The sandbox refuses, with
// [intent.ReasonOutsideRoot], any ".." component, any absolute path and any symbolic
// link (file or directory, at any depth) that is absolute or leads out of
// the root; it refuses NUL bytes ([intent.ReasonBadPath]) and files that are not
// regular: FIFOs, devices, sockets ([intent.ReasonNotRegular]). Each check is made
// explicitly, for a clear message, and again by an [os.Root] that [New] opens
// on the root and holds until [Executor.Close]: every open, stat, walk,
// rename and mkdir goes through it, which refuses escapes by construction,
// race-free, even while links inside the root are being swapped; and a root
// renamed away or replaced by a link after New is still the same folder. A
// backslash is an ordinary character on Unix: "..\\x" and "%2e%2e/x" are
// literal file names inside the root.
//
// The sandbox is about names, not files: every name a tool resolves stays
// inside the root, but a hard link inside the root is the same file as its
// other names, which may be outside; read_file and grep read such a file
// unless [WithRefuseHardLinks] is given. write_file replaces a name with a
// new file, so it never changes a file through a hard link.
//
// # Arguments of the built-in tools
//
// Every path is relative to the root; arguments not listed are invalid
// (the schemas set additionalProperties to false). `maker tools` prints
// the same list, and --json the schemas; [Executor.ToolArgs] and
// [Executor.ToolSchema] give them to a program.
//
//	read_file   path (string, required): file path relative to the root folder
//	            limit (integer): most lines to return (default 2000)
//	            offset (integer): first line to return, counted from 1 (default 1)
//	list_dir    path (string): folder path relative to the root folder (default ".")
//	glob        pattern (string, required): glob matched against paths relative to path: * ? [abc] within a name, ** for any number of folders
//	            path (string): folder to search, relative to the root folder (default ".")
//	grep        pattern (string, required): Go (RE2) regular expression
//	            case_insensitive (boolean): match regardless of case (default false)
//	            glob (string): only search files whose name (or, if it has a /, whose path) matches
//	            max_results (integer): most matching lines to return (default 200)
//	            paths (array of string): files or folders relative to the root folder (default ["."])
//	write_file  content (string, required): the whole new content of the file
//	            path (string, required): file path relative to the root folder
//	            create_dirs (boolean): create missing parent folders (default false)
//
// list_tool_categories takes no arguments.
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
// [Declare] answers "what does this call declare?": the names asked for
// that the executor has and its policy allows, with the schemas Execute
// validates against and descriptions from skill files (skills/NAME.md,
// whose front matter carries the description) where present, plus every
// tool that the conversation history already calls; without an executor,
// from schema files (tools/NAME.json). [DescribeTools] renders a
// declaration as the compact, stable text a prompt carries for a model
// without native tools. [Executor.Tools] declares every loaded tool.
// Declaring a tool is not permitting it: Execute checks the policy again.
package executor
