package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mdap-go/mdap/internal/safefile"
	"github.com/mdap-go/mdap/internal/words"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/journalfile"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/spec"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RunTaskInput is the input of the run_task tool.
type RunTaskInput struct {
	Spec         any    `json:"spec,omitempty" jsonschema:"the task spec as a JSON object (system, answer, initial_state, tools, max_steps, done_field, root, observations, observation_bytes, script; see maker/spec); give spec or spec_path"`
	SpecPath     string `json:"spec_path,omitempty" jsonschema:"a spec file, relative to the server's root; it may not leave the root"`
	Journal      string `json:"journal,omitempty" jsonschema:"the journal's file name in the server's state folder (letters, digits, '.', '-', '_'); default one named after the task, which the output gives"`
	Resume       bool   `json:"resume,omitempty" jsonschema:"resume the run recorded in the journal (after a cancelled or failed call), with the same spec and settings"`
	RerunPending bool   `json:"rerun_pending,omitempty" jsonschema:"on resume, run again a side-effect tool call that was pending when the last run stopped (otherwise such a resume is refused)"`
	Sampling
}

// RunTaskOutput is the output of the run_task tool: the run's summary.
type RunTaskOutput struct {
	Done           bool           `json:"done" jsonschema:"true when the task said it was finished"`
	Message        string         `json:"message" jsonschema:"the outcome in words"`
	Task           string         `json:"task" jsonschema:"the task's fingerprint (its name and a hash of its spec)"`
	Journal        string         `json:"journal" jsonschema:"the journal's file name in the state folder: resume with it"`
	Steps          int            `json:"steps" jsonschema:"decided steps, replayed ones included"`
	Resumed        int            `json:"resumed" jsonschema:"steps replayed from the journal"`
	Samples        int            `json:"samples" jsonschema:"samples drawn"`
	Valid          int            `json:"valid" jsonschema:"samples that voted"`
	Flagged        int            `json:"flagged" jsonschema:"red-flagged samples"`
	Errors         int            `json:"errors" jsonschema:"failed model calls"`
	Cancelled      int            `json:"cancelled" jsonschema:"samples drawn but not tallied"`
	Flags          map[string]int `json:"flags" jsonschema:"red-flagged samples by flag"`
	SamplesPerStep float64        `json:"samples_per_step" jsonschema:"samples drawn per decided step"`
	ToolCalls      int            `json:"tool_calls" jsonschema:"winning tool calls sent to the executor"`
	Checked        int            `json:"checked" jsonschema:"decided steps whose winner the spec's checker verified"`
	VoteOnly       int            `json:"vote_only" jsonschema:"decided steps only the vote decided (no checker, or a tool call)"`
	Denied         int            `json:"denied" jsonschema:"of those, the ones the policy or the sandbox refused"`
	FinalState     any            `json:"final_state" jsonschema:"the task's state after the last decided step"`
	Usage          Usage          `json:"usage" jsonschema:"what the samples cost"`
	WallSeconds    float64        `json:"wall_seconds" jsonschema:"the time this call took"`
	Model          string         `json:"model" jsonschema:"the identity of the model (or ensemble)"`
}

// journalName is what a journal's file name may be: a plain name, so it
// stays in the state folder.
var journalName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (s *Server) runTool(ctx context.Context, req *mcp.CallToolRequest, in RunTaskInput) (*mcp.CallToolResult, RunTaskOutput, error) {
	var out RunTaskOutput
	if s.cfg.State == "" {
		return nil, out, fmt.Errorf("%w: this server has no state folder for journals, so it cannot run tasks; its operator sets one with --state", ErrNoState)
	}
	sp, err := s.loadSpec(req, in)
	if err != nil {
		return nil, out, err
	}
	opened, err := s.openSpec(sp, in.SpecPath)
	if err != nil {
		return nil, out, err
	}
	defer opened.Close()
	task, ex, tools := opened.Task, opened.Executor, opened.Tools
	out.Task = task.Fingerprint()
	st, err := s.check(in.Sampling)
	if err != nil {
		return nil, out, err
	}
	var oracle sim.Oracle
	if len(sp.Script) > 0 {
		oracle = spec.Oracle{Spec: sp}
	}
	model, err := s.open(st, oracle, "answers a spec task from the spec's script, and this spec has none; add a script, or use a real model")
	if err != nil {
		return nil, out, err
	}
	out.Model = maker.ModelIdentity(model)
	name := in.Journal
	if name == "" {
		name = defaultJournal(sp, task.Fingerprint())
	} else if !journalName.MatchString(name) || name == "." || name == ".." {
		return nil, out, fmt.Errorf("%w: journal %q: give a plain file name of letters, digits, '.', '-' and '_' (it lives in the server's state folder)", ErrArgument, name)
	}
	out.Journal = name
	if in.RerunPending && !in.Resume {
		return nil, out, fmt.Errorf("%w: rerun_pending applies to resume only: it finishes the pending tool call of a resumed run", ErrArgument)
	}

	release, err := s.journals.acquire(ctx, name, JournalGrace)
	if err != nil {
		return nil, out, err
	}
	defer release()
	if err := safefile.PrivateDir(s.cfg.State); err != nil {
		return nil, out, fmt.Errorf("%w: the state folder: %w; its operator names another with --state", ErrNoState, err)
	}
	path := filepath.Join(s.cfg.State, name)
	var j *journal.Journal
	var opts []journal.Option
	if s.cfg.UnsignedJournals {
		opts = append(opts, journal.Unsigned())
	}
	if in.Resume {
		j, err = journalfile.Open(path, opts...)
	} else {
		j, err = journalfile.Create(path, opts...)
	}
	switch {
	case errors.Is(err, journal.ErrExists):
		return nil, out, fmt.Errorf("%w: %s already exists: resume its run with resume: true, or give another journal name", journal.ErrExists, name)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, journal.ErrPath) && in.Resume && !exists(path):
		return nil, out, fmt.Errorf("journal %s: %w: there is no run to resume; call without resume to start one", name, fs.ErrNotExist)
	case err != nil:
		return nil, out, fmt.Errorf("journal %s: %w", name, err)
	}
	defer j.Close()

	prog := newProgress(ctx, req, s.log)
	solver := s.solver(st, model, tools, &runParts{executor: ex, journal: j, rerunPending: in.RerunPending, progress: func(e maker.Event) {
		what := "decided"
		if e.Replayed {
			what = "replayed from the journal"
		}
		prog.step(float64(sp.MaxSteps), "step %d %s", e.Step, what)
	}})
	s.log.Info("run_task", "task", out.Task, "journal", name, "resume", in.Resume, "model", out.Model, "k", st.vote.K)
	rep, runErr := solver.Solve(callerTrace(ctx, req), task)
	if cerr := j.Close(); cerr != nil && runErr == nil {
		runErr = cerr
	}
	out.summarise(rep, task)
	switch {
	case runErr == nil:
		out.Message = fmt.Sprintf("done: %s (%d replayed from the journal), %s, final state %s", words.Plural(rep.Steps, "step"), rep.Resumed, words.Plural(rep.Launched, "sample"), abbreviate(task.State()))
		return nil, out, nil
	case ctx.Err() != nil:
		return nil, out, fmt.Errorf("run_task cancelled after %s; the decided steps are in journal %s: call run_task again with resume: true, journal %q and the same spec and settings: %w",
			words.Plural(rep.Steps, "step"), name, name, ctx.Err())
	case errors.Is(runErr, journal.ErrMismatch), errors.Is(runErr, journal.ErrCorrupt), errors.Is(runErr, journal.ErrVersion), errors.Is(runErr, maker.ErrPendingSideEffect):
		return nil, out, fmt.Errorf("journal %s: %w", name, runErr)
	}
	advice := "the decided steps are in the journal; resume with resume: true (a larger max_samples or max_errors is allowed)"
	if errors.Is(runErr, maker.ErrStepLimit) {
		advice = "the task did not finish within its max_steps"
	}
	out.Message = fmt.Sprintf("the run failed after %s: %v; %s", words.Plural(rep.Steps, "step"), runErr, advice)
	return failure(out.Message), out, nil
}

func (o *RunTaskOutput) summarise(rep maker.Report, task *spec.Task) {
	o.Done = rep.Done
	o.Steps, o.Resumed = rep.Steps, rep.Resumed
	o.Samples, o.Valid, o.Flagged, o.Errors, o.Cancelled = rep.Launched, rep.Valid, rep.Flagged, rep.Errors, rep.Cancelled
	o.Flags = maps.Clone(rep.Flags)
	if o.Flags == nil {
		o.Flags = map[string]int{}
	}
	o.SamplesPerStep = rep.SamplesPerStep()
	o.ToolCalls, o.Denied = rep.ToolCalls, rep.Denied
	o.Checked, o.VoteOnly = rep.Checked, rep.VoteOnly
	o.Usage = Usage{InputTokens: rep.Usage.InputTokens, OutputTokens: rep.Usage.OutputTokens, ModelSeconds: rep.Usage.Latency.Seconds()}
	o.WallSeconds = rep.Wall.Seconds()
	dec := json.NewDecoder(bytes.NewReader(task.State()))
	dec.UseNumber()
	_ = dec.Decode(&o.FinalState) // a spec state is JSON
}

// loadSpec reads the request's spec: inline, exactly as sent, or from a
// file under the root.
func (s *Server) loadSpec(req *mcp.CallToolRequest, in RunTaskInput) (*spec.Spec, error) {
	switch {
	case in.Spec != nil && in.SpecPath != "":
		return nil, fmt.Errorf("%w: give spec or spec_path, not both", ErrArgument)
	case in.Spec == nil && in.SpecPath == "":
		return nil, fmt.Errorf("%w: give the task: spec (a JSON object) or spec_path (a file under the server's root)", ErrArgument)
	case in.Spec != nil:
		// The raw arguments keep the spec's numbers as sent.
		raw := struct {
			Spec json.RawMessage `json:"spec"`
		}{}
		if req == nil || req.Params == nil || json.Unmarshal(req.Params.Arguments, &raw) != nil || len(raw.Spec) == 0 {
			b, err := json.Marshal(in.Spec)
			if err != nil {
				return nil, fmt.Errorf("%w: spec: %v", ErrArgument, err)
			}
			raw.Spec = b
		}
		sp, err := spec.Parse(raw.Spec)
		if err != nil {
			return nil, fmt.Errorf("spec: %w", err)
		}
		return sp, nil
	}
	p := in.SpecPath
	b, err := s.readSpecFile(p)
	if err != nil {
		return nil, err
	}
	sp, err := spec.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("spec_path %q: %w", p, err)
	}
	return sp, nil
}

// readSpecFile reads the spec file p (a spec_path) under the server's
// root: a relative path that does not leave the root (by "..", or by a
// symbolic link), a regular file of at most MaxRequestBytes.
func (s *Server) readSpecFile(p string) ([]byte, error) {
	if filepath.IsAbs(p) || !filepath.IsLocal(p) {
		return nil, fmt.Errorf("%w: spec_path %q: give a path relative to the server's root, without \"..\" parts", ErrOutsideRoot, p)
	}
	fi, err := s.root.Stat(p)
	if err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: spec_path %q is not a regular file", ErrArgument, p)
	}
	if err == nil && fi.Size() > s.cfg.MaxRequestBytes {
		return nil, fmt.Errorf("%w: spec_path %q is %d bytes; this server reads specs of at most %d", ErrArgument, p, fi.Size(), s.cfg.MaxRequestBytes)
	}
	var b []byte
	if err == nil {
		b, err = readIn(s.root, p, s.cfg.MaxRequestBytes)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: spec_path %q: no such file under the server's root", ErrArgument, p)
	case err != nil && strings.Contains(err.Error(), "escapes"):
		return nil, fmt.Errorf("%w: spec_path %q leads out of the server's root through a symbolic link", ErrOutsideRoot, p)
	case err != nil:
		return nil, fmt.Errorf("%w: spec_path %q: %v", ErrArgument, p, err)
	}
	return b, nil
}

// openSpec opens the spec with spec.Open, the one way: its root inside
// the server's root, the server's policy and logger, the server's own
// executor when the spec has no root of its own (else a new one, which
// the caller closes with the result), and skills/NAME.md beside the spec
// file, or at the server's root for an inline spec.
func (s *Server) openSpec(sp *spec.Spec, specPath string) (*spec.Opened, error) {
	skills := s.root.FS()
	if specPath != "" {
		var err error
		if skills, err = fs.Sub(skills, path.Dir(filepath.ToSlash(specPath))); err != nil {
			return nil, fmt.Errorf("%w: spec_path %q: %v", ErrArgument, specPath, err)
		}
	}
	opened, err := spec.Open(sp, spec.Grant{Sandbox: s.cfg.Root, Policy: s.exec.Policy(), Skills: skills, Logger: s.log, Shared: s.exec})
	switch {
	case errors.Is(err, spec.ErrOutsideSandbox), errors.Is(err, spec.ErrNoSandbox):
		return nil, fmt.Errorf("spec: %w (the server's root is the folder granted)", err)
	case err != nil:
		return nil, fmt.Errorf("spec: %w", err)
	}
	return opened, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultJournal names a task's journal after the spec's name and its
// fingerprint's hash: the same task gets the same journal.
func defaultJournal(sp *spec.Spec, fingerprint string) string {
	name := strings.Trim(unsafeName.ReplaceAllString(sp.Name, "-"), ".-_")
	if name == "" {
		name = "task"
	}
	if len(name) > 64 {
		name = name[:64]
	}
	hash := fingerprint[strings.LastIndexByte(fingerprint, ':')+1:]
	return name + "-" + hash + ".jsonl"
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// abbreviate shortens a JSON text for a message.
func abbreviate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// readIn reads name under root, at most max bytes, opening it without
// blocking: a FIFO swapped in after the Stat is refused, not waited on.
func readIn(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := safefile.OpenIn(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("it grew past %d bytes while read", max)
	}
	return b, err
}
