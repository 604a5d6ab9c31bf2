package batch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mdap-go/mdap/internal/safefile"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/mdap-go/mdap/vote"
)

// ErrJob is wrapped by every error about one line of a tasks file. Such a
// line becomes a job with Err set, reported with StatusInvalid; the other
// lines still run.
var ErrJob = errors.New("bad task line")

// Bounds of a tasks file's lines.
const (
	// MaxLineBytes is the longest line ReadJobs reads; a longer one is an
	// invalid job (the rest of the file is still read).
	MaxLineBytes = 64 << 10
	// MaxIDBytes is the longest id.
	MaxIDBytes = 128
	// MaxK bounds a line's "k": vote.Config's bound of K.
	MaxK = vote.MaxK
)

// Job is one line of a tasks file: a task (exactly one of Spec, Hanoi,
// a family's problem (Family), Problem and Task) with an id and optional overrides of the run's
// settings.
//
//	{"id": "v1", "spec": "specs/find-version.json", "k": 5, "tools": "read_only"}
//	{"id": "h12", "hanoi": {"disks": 12}, "seed": 7}
//	{"id": "m1", "multiply": {"a": "123456", "b": "654321"}}
//	{"id": "s1", "sort": {"list": [5, 3, 9]}}
//
// Pointer fields are nil when the line leaves them out.
type Job struct {
	// ID names the task in the results; unique within a file.
	ID string `json:"id"`
	// Spec is a spec file (see package spec), relative to Dir.
	Spec string `json:"spec,omitempty"`
	// Hanoi is a Towers of Hanoi task.
	Hanoi *HanoiJob `json:"hanoi,omitempty"`
	// Family and FamilyInput are a problem of a built-in family
	// (problems.Builtins) solved by voted decomposition: the line's key is
	// the family's name and its value the problem ("multiply": {"a":
	// "DIGITS", "b": "DIGITS"}, "sort": {"list": [INTEGERS]}), checked by
	// the family when the line is read. ReadJobs reads them; as a Job's
	// own JSON (encoding/json, no methods of its own) they are the keys
	// "family" and "family_input", which a task line may not use.
	Family      string          `json:"family,omitempty"`
	FamilyInput json.RawMessage `json:"family_input,omitempty"`
	// families counts the family keys of the line (more than one is an
	// error).
	families int
	// Problem is a problem of a problem spec (problems.Spec) solved by
	// voted decomposition: {"spec": "FILE.json", "input": {...}}, the
	// spec relative to Dir, both checked when the line is read.
	Problem *ProblemJob `json:"problem,omitempty"`
	// Task is a task for a library's own Builder, in its own format;
	// Builtin refuses it.
	Task json.RawMessage `json:"task,omitempty"`
	// Input, for a spec task, is a JSON object merged into the spec's
	// initial state (spec.Spec.WithInput): one spec over many inputs.
	Input json.RawMessage `json:"input,omitempty"`
	// K overrides the voting margin.
	K *int `json:"k,omitempty"`
	// Root overrides the folder the file tools work in, relative to Dir.
	Root *string `json:"root,omitempty"`
	// Tools overrides the tool policy (a --tools list).
	Tools *string `json:"tools,omitempty"`
	// Seed overrides the simulated model's seed.
	Seed *uint64 `json:"seed,omitempty"`
	// MaxSteps stops the task after that many steps.
	MaxSteps *int `json:"max_steps,omitempty"`
	// MaxSamples and MaxErrors override the per-step budgets.
	MaxSamples *int `json:"max_samples,omitempty"`
	MaxErrors  *int `json:"max_errors,omitempty"`

	// Line is the job's line number in its file, from 1 (0 for a job
	// that comes from no file).
	Line int `json:"-"`
	// Dir is the folder relative paths are resolved against: the tasks
	// file's folder.
	Dir string `json:"-"`
	// Err, when set, is why the line is not a job (it wraps ErrJob and
	// names the line); the job is reported invalid and never run.
	Err error `json:"-"`
}

// ProblemJob is a problem spec's problem: the spec file and the input.
type ProblemJob struct {
	Spec  string          `json:"spec"`
	Input json.RawMessage `json:"input"`
}

// HanoiJob is a Towers of Hanoi task.
type HanoiJob struct {
	// Disks is the number of disks, 1 to hanoi.MaxDisks.
	Disks int `json:"disks"`
}

// Kind names the job's task: "spec", "hanoi", a family's name ("multiply", "sort"), "problem", "task",
// or "" when the line has none.
func (j Job) Kind() string {
	switch {
	case j.Spec != "":
		return "spec"
	case j.Hanoi != nil:
		return "hanoi"
	case j.Family != "":
		return j.Family
	case j.Problem != nil:
		return "problem"
	case j.Task != nil:
		return "task"
	}
	return ""
}

// Key identifies the job among a file's jobs and their results: "id:" and
// the id, or "line:" and the line number for a line whose id is missing,
// unreadable or taken by an earlier line.
func (j Job) Key() string {
	if j.ID != "" {
		return "id:" + j.ID
	}
	return "line:" + strconv.Itoa(j.Line)
}

// Path resolves p against the job's Dir, unless p is absolute.
func (j Job) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(j.Dir, p)
}

// Where names the job for messages: "line 7 (id "a")" or "line 7".
func (j Job) Where() string {
	var w string
	if j.Line > 0 {
		w = "line " + strconv.Itoa(j.Line)
	}
	if j.ID != "" {
		if w != "" {
			w += " "
		}
		w += "(id " + strconv.Quote(j.ID) + ")"
	}
	if w == "" {
		w = "job"
	}
	return w
}

// fields lists a line's fields, for the message about an unknown one.
func fields() string {
	return "id, spec, input, hanoi, " + strings.Join(problems.Names(), ", ") + ", problem, task, k, root, tools, seed, max_steps, max_samples, max_errors"
}

// decodeLine reads a task line into j: a key naming a built-in family
// (problems.Builtins, matched regardless of case as encoding/json matches
// field names) sets Family and FamilyInput, every other key a field; an
// unknown key, or "family" and "family_input" (a Job's own JSON, not a
// line's), is an error ("json: unknown field").
func (j *Job) decodeLine(b []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil || keys == nil {
		return json.Unmarshal(b, j) // its error, or a null line's nothing
	}
	for key := range keys {
		if strings.EqualFold(key, "family") || strings.EqualFold(key, "family_input") {
			return fmt.Errorf("json: unknown field %q", key)
		}
	}
	names := problems.Names()
	for key, v := range keys {
		i := slices.IndexFunc(names, func(name string) bool { return strings.EqualFold(key, name) })
		if i < 0 {
			continue
		}
		if j.families++; j.Family == "" || names[i] < j.Family {
			j.Family, j.FamilyInput = names[i], v // the same family whichever order the map gives
		}
		delete(keys, key)
	}
	if j.families > 0 {
		b, _ = json.Marshal(keys) // the other keys, read as fields below
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(j)
}

// ReadJobsFile reads the tasks file at path (see ReadJobs); relative paths
// in it are relative to its folder. Errors: the file system's,
// safefile.ErrNotRegular (a FIFO, a device or a folder: refused without
// blocking), and ReadJobs'.
func ReadJobsFile(path string) ([]Job, error) {
	return ReadInputsFile(path, "")
}

// ReadInputsFile is ReadJobsFile with a default spec: a line that names no
// task ("spec", "hanoi" or "task") is a task of spec, so a file of lines
// such as {"id": "doc-17", "input": {"file": "17.txt"}} runs one spec over
// many inputs (see Job.Input). spec is a path as given (relative to the
// working folder, not to the file); "" is ReadJobsFile.
func ReadInputsFile(path, spec string) ([]Job, error) {
	f, err := safefile.Open(path) // a FIFO or a device is refused at once
	if err != nil {
		return nil, fmt.Errorf("%w: give a tasks file of JSON lines", err)
	}
	defer f.Close()
	jobs, err := ReadInputs(f, filepath.Dir(path), spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return jobs, nil
}

// ErrNoTasks is a tasks file without a task: ReadTasks' refusal.
var ErrNoTasks = errors.New("no tasks")

// ReadTasks reads the tasks of path as ReadInputsFile does, or of stdin
// when path is "-" (relative paths then against the working folder), and
// refuses a file with no task.
//
// Errors: ReadInputsFile's and ReadInputs'; ErrNoTasks, naming path and
// the form of a line, when there is no task. Cost: ReadInputs'.
func ReadTasks(path string, stdin io.Reader, spec string) (jobs []Job, err error) {
	if path == "-" {
		jobs, err = ReadInputs(stdin, ".", spec)
	} else {
		jobs, err = ReadInputsFile(path, spec)
	}
	if err == nil && len(jobs) == 0 {
		err = fmt.Errorf("%s has %w: write one JSON object per line, such as {\"id\": \"h3\", \"hanoi\": {\"disks\": 3}}", path, ErrNoTasks)
	}
	return jobs, err
}

// ReadJobs reads a tasks file: one JSON object per line, strictly (an
// unknown field, a second value on the line, a wrong type are errors),
// exactly one of "spec", "hanoi" and "task", a non-empty id of at most
// MaxIDBytes bytes of printable UTF-8 that no earlier line uses, and
// overrides in range. Blank lines are skipped; a UTF-8 byte-order mark
// and CRLF line ends are accepted. dir is the folder relative paths are
// resolved against.
//
// A bad line does not stop the reading: it becomes a job with Err set,
// wrapping ErrJob and naming the line (and the id, when it could be read
// and is not taken). ReadJobs touches no file: a spec file that does not
// exist is the Builder's finding. The only error returned is r's.
// Cost: one pass, memory linear in the jobs; a line over MaxLineBytes is
// skipped without being held.
func ReadJobs(r io.Reader, dir string) ([]Job, error) {
	return ReadInputs(r, dir, "")
}

// ReadInputs is ReadJobs with a default spec (see ReadInputsFile): a line
// that names no task is a task of spec, a path as given; "" is ReadJobs.
func ReadInputs(r io.Reader, dir, spec string) ([]Job, error) {
	if spec != "" {
		abs, err := filepath.Abs(spec)
		if err != nil {
			return nil, err
		}
		spec = abs
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var jobs []Job
	seen := map[string]int{} // id -> line
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return jobs, fmt.Errorf("reading line %d: %w", n, err)
		}
		if tooLong {
			jobs = append(jobs, Job{Line: n, Dir: dir, Err: fmt.Errorf("%w: line %d is longer than %d bytes", ErrJob, n, MaxLineBytes)})
		} else {
			if n == 1 {
				line = bytes.TrimPrefix(line, []byte("\ufeff"))
			}
			if len(bytes.TrimSpace(line)) > 0 {
				job := parseJob(line, n, dir, spec)
				if job.ID != "" {
					if first, dup := seen[job.ID]; dup {
						job.Err = fmt.Errorf("%w: line %d: id %q is already used by line %d; give every task a unique id", ErrJob, n, job.ID, first)
						job.ID = ""
					} else {
						seen[job.ID] = n
					}
				}
				jobs = append(jobs, job)
			}
		}
		if errors.Is(err, io.EOF) {
			return jobs, nil
		}
	}
}

// readLine reads one line without its line end. A line longer than
// MaxLineBytes is read to its end and dropped (tooLong). err is io.EOF
// with the last line.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > MaxLineBytes+2 { // room for "\r\n"
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		if !tooLong && len(buf) > MaxLineBytes {
			tooLong, buf = true, nil
		}
		return buf, tooLong, err
	}
}

// parseJob reads one non-blank line.
func parseJob(line []byte, n int, dir, spec string) Job {
	job := Job{Line: n, Dir: dir}
	bad := func(format string, a ...any) Job {
		job.Err = fmt.Errorf("%w: line %d: %s", ErrJob, n, fmt.Sprintf(format, a...))
		return job
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil {
		err = job.decodeLine(raw)
	}
	if err != nil {
		job = Job{Line: n, Dir: dir, ID: lenientID(line)}
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF):
			return bad("malformed JSON: %v; write one JSON object per line", err)
		case errors.As(err, &typ) && typ.Field == "":
			return bad("a task line is a JSON object, not %s", typ.Value)
		case errors.As(err, &typ):
			return bad("%q is %s, want %s", typ.Field, typ.Value, typeName(typ.Type.String()))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return bad("unknown field %s; the fields are %s", strings.TrimPrefix(err.Error(), "json: unknown field "), fields())
		}
		return bad("%v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		job = Job{Line: n, Dir: dir}
		return bad("more than one JSON value; write one task per line")
	}
	if job.ID == "" {
		return bad(`no "id": give every task a unique id`)
	}
	if err := checkID(job.ID); err != nil {
		job.ID = ""
		return bad("%v", err)
	}
	if spec != "" && job.Spec == "" && job.Hanoi == nil && job.Task == nil && decompositionKinds(job) == 0 {
		job.Spec = spec
	}
	kinds := 0
	if job.Spec != "" {
		kinds++
	}
	if job.Hanoi != nil {
		kinds++
	}
	if job.Task != nil {
		kinds++
	}
	kinds += decompositionKinds(job)
	switch {
	case kinds == 0:
		var fams []string
		for _, b := range problems.Builtins() {
			fams = append(fams, fmt.Sprintf("%q: %s, ", b.Name(), b.Example))
		}
		return bad(`no task: give "spec": "FILE.json", "hanoi": {"disks": N}, %sor "problem": {"spec": "FILE.json", "input": {...}}`, strings.TrimSuffix(strings.Join(fams, ""), ", ")+" ")
	case kinds > 1:
		return bad(`more than one task: give exactly one of "spec", "hanoi", %s, "problem" and "task"`, quoted(problems.Names()))
	case job.Hanoi != nil && (job.Hanoi.Disks < 1 || job.Hanoi.Disks > hanoi.MaxDisks):
		return bad(`"hanoi": {"disks": %d}: use 1 to %d`, job.Hanoi.Disks, hanoi.MaxDisks)
	case job.K != nil && (*job.K < 1 || *job.K > MaxK):
		return bad(`"k" is %d: use 1 to %d`, *job.K, MaxK)
	case job.MaxSteps != nil && *job.MaxSteps < 1:
		return bad(`"max_steps" is %d: use 1 or more, or leave it out`, *job.MaxSteps)
	case job.MaxSamples != nil && *job.MaxSamples < 1:
		return bad(`"max_samples" is %d: use 1 or more, or leave it out`, *job.MaxSamples)
	case job.MaxErrors != nil && *job.MaxErrors < 0:
		return bad(`"max_errors" is %d: use 0 or more, or leave it out`, *job.MaxErrors)
	case job.Root != nil && *job.Root == "":
		return bad(`"root" is empty: name a folder, or leave it out`)
	case job.Tools != nil && strings.TrimSpace(*job.Tools) == "":
		return bad(`"tools" is empty: give a --tools list such as "read_only", or leave it out`)
	}
	if err := checkDecomposition(job); err != nil {
		return bad("%v", err)
	}
	if job.Task != nil && bytes.Equal(bytes.TrimSpace(job.Task), []byte("null")) {
		return bad(`"task" is null: give the task's object`)
	}
	if job.Input != nil {
		switch in := bytes.TrimSpace(job.Input); {
		case job.Spec == "":
			return bad(`"input" is for a "spec" task: it sets fields of the spec's initial state`)
		case len(in) == 0 || in[0] != '{':
			return bad(`"input" is %s: give a JSON object of the initial state's fields to set, such as {"file": "a.txt"}`, in)
		}
	}
	return job
}

// lenientID reads the id of a line that is not a valid job, if it is a
// JSON object with a usable string id.
func lenientID(line []byte) string {
	var v struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(line, &v) != nil || checkID(v.ID) != nil {
		return ""
	}
	return v.ID
}

// checkID refuses an id that cannot name a task in results and messages.
func checkID(id string) error {
	switch {
	case id == "":
		return errors.New(`"id" is empty: give every task a unique id`)
	case len(id) > MaxIDBytes:
		return fmt.Errorf(`"id" is %d bytes long: use at most %d`, len(id), MaxIDBytes)
	case !utf8.ValidString(id):
		return errors.New(`"id" is not valid UTF-8`)
	}
	for _, r := range id {
		if !unicode.IsPrint(r) {
			return fmt.Errorf(`"id" %q holds a control or invisible character: use letters, digits and punctuation`, id)
		}
	}
	return nil
}

// typeName words a Go type for a person.
func typeName(t string) string {
	switch strings.TrimPrefix(t, "*") {
	case "int", "uint64":
		return "a whole number"
	case "string":
		return "a string"
	case "batch.HanoiJob":
		return `an object such as {"disks": 10}`
	case "json.RawMessage":
		return "a JSON value"
	}
	return t
}

// quoted is names quoted and joined by ", ".
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
