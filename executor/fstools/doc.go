// Package fstools is the built-in file tools (read_file, list_dir, glob,
// grep, write_file) over one root folder, held open as an os.Root for the
// executor's life: every path a model gives is checked and resolved inside
// the root, race-free, and what leads out (a "..", an absolute path, a
// symbolic link leading out) is a denial the model can read. A [Dir] is an
// [executor.Workspace]; [New] opens one and builds the executor over it.
//
// The tools are the executor's sandboxed implementation, not its checks:
// the executor (package executor) decides whether a call may run at all
// (registered, allowed by the policy, arguments valid) and runs it under
// its timeout; these tools then do the work inside the root.
//
// # The tools
//
// [Open] holds a root folder for five tools:
// read_file and list_dir (category file_read), glob and grep (search), and
// write_file (file_write, which the default read-only policy withholds).
// Every path is relative to the root. The sandbox refuses, with
// [intent.ReasonOutsideRoot], any ".." component, any absolute path and any symbolic
// link (file or directory, at any depth) that is absolute or leads out of
// the root; it refuses NUL bytes ([intent.ReasonBadPath]) and files that are not
// regular: FIFOs, devices, sockets ([intent.ReasonNotRegular]). Each check is made
// explicitly, for a clear message, and again by an [os.Root] that [Open] opens
// on the root and holds until [Dir.Close] (the executor's Close): every open, stat, walk,
// rename and mkdir goes through it, which refuses escapes by construction,
// race-free, even while links inside the root are being swapped; and a root
// renamed away or replaced by a link after Open is still the same folder. A
// backslash is an ordinary character on Unix: "..\\x" and "%2e%2e/x" are
// literal file names inside the root.
//
// The sandbox is about names, not files: every name a tool resolves stays
// inside the root, but a hard link inside the root is the same file as its
// other names, which may be outside; read_file and grep read such a file
// unless [WithRefuseHardLinks] is given. write_file replaces a name with a
// new file, so it never changes a file through a hard link.
//
// # Time
//
// The tools are [executor.ContextBound]: the executor runs them on the
// caller's goroutine, and every inner loop checks the context or is
// bounded by construction: file reads go in chunks, walks and line scans
// check the context at each step, path resolution at each component; glob
// matching is linear (no backtracking on repeated "**"); grep refuses a
// regular expression whose program is too large and matches each line
// only up to a window inversely proportional to the program's size, saying
// so when a line is longer. A timed-out call therefore returns soon after
// its timeout and leaves no goroutine running.
//
// # Arguments of the built-in tools
//
// Every path is relative to the root; arguments not listed are invalid
// (the schemas set additionalProperties to false). `maker tools` prints
// the same list, and --json the schemas; [executor.Executor.ToolArgs] and
// [executor.Executor.ToolSchema] give them to a program.
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
package fstools
