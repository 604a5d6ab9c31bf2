package mcpserver

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// ToolSolveProblem is the tool that solves a problem by voted
// decomposition.
const ToolSolveProblem = "solve_problem"

// SolveProblemInput is the input of the solve_problem tool: exactly one
// problem, and the plan's settings. A problem of a built-in family is
// its own key, the family's name ("multiply": {"a": ..., "b": ...},
// "sort": {"list": [...]}: problems.Builtins), which the tool's schema
// lists and the tool reads from the call's arguments.
type SolveProblemInput struct {
	Problem    *SpecProblem        `json:"problem,omitempty" jsonschema:"a problem of a problem spec (role prompts and the JSON Schemas of input and answer; see docs/decompose.md): spec or spec_path, and input"`
	Target     float64             `json:"target,omitempty" jsonschema:"T: the whole tree is right with probability at least T while every role decides right with probability p, independently (default 0.95)"`
	P          float64             `json:"p,omitempty" jsonschema:"every role's p, for the plan's k (and the simulated model's accuracy); default 0.9"`
	Strategy   string              `json:"strategy,omitempty" jsonschema:"ahead (default: first-to-ahead-by-k, candidates shuffled per vote) or first-to-k (the MAKER authors' scheme, as a baseline)"`
	Journal    string              `json:"journal,omitempty" jsonschema:"the journal's file name in the server's state folder (letters, digits, '.', '-', '_'); default one named after the problem, which the output gives"`
	Resume     bool                `json:"resume,omitempty" jsonschema:"resume the run recorded in the journal (after a cancelled or failed call), with the same problem and settings"`
	Models     []string            `json:"models,omitempty" jsonschema:"the model specs that play every role, each one the server allows; default the server's first model (sim plays every role from the family's truth)"`
	RoleModels map[string][]string `json:"role_models,omitempty" jsonschema:"optional: roles' own model specs (atomic, decompose, discriminate, solve, compose: a list each, several an ensemble), each one the server allows, over models for the roles named; real models only (sim plays every role or none)"`
	BaseURL    string              `json:"base_url,omitempty" jsonschema:"the server the openai: and ollama: models call; only the server's own unless its operator allowed any"`
}

// SpecProblem is a problem of a problem spec (maker/problems.Spec): the
// spec inline or as a file under the server's root, and the input its
// "input" schema takes.
type SpecProblem struct {
	Spec     any    `json:"spec,omitempty" jsonschema:"the problem spec as a JSON object (name, prompts, input, answer, optional checker, structured, atomic_bytes, max_depth, max_breadth, family); give spec or spec_path"`
	SpecPath string `json:"spec_path,omitempty" jsonschema:"a problem spec file, relative to the server's root; it may not leave the root"`
	Input    any    `json:"input" jsonschema:"the problem, as the spec's input schema says"`
}

// SolveProblemOutput is the output of the solve_problem tool.
type SolveProblemOutput struct {
	Solved      bool                  `json:"solved" jsonschema:"true when the tree finished and its answer passed the family's exact check (a problem spec's checker; a spec without one: when it gave an answer)"`
	Message     string                `json:"message" jsonschema:"the outcome in words"`
	Answer      any                   `json:"answer" jsonschema:"the answer: the product as a decimal string, or the sorted list"`
	Correct     bool                  `json:"correct" jsonschema:"the exact check's verdict on the answer"`
	Checked     bool                  `json:"checked" jsonschema:"whether the answer was checked: false for a problem spec without a checker or family (correct is then false, and says nothing)"`
	Journal     string                `json:"journal" jsonschema:"the journal's file name in the state folder: resume with it"`
	Samples     int                   `json:"samples" jsonschema:"model calls over every decision, journaled ones included"`
	Cost        float64               `json:"cost" jsonschema:"their cost in dollars"`
	Nodes       int                   `json:"nodes" jsonschema:"the tree's nodes"`
	Wrong       int                   `json:"wrong" jsonschema:"decisions the family's truth finds wrong"`
	Unprotected int                   `json:"unprotected" jsonschema:"co-failed decisions decided wrong (the simulated model's co-failure)"`
	Resumed     int                   `json:"resumed" jsonschema:"decisions read back from the journal"`
	Roles       map[string]RoleFigure `json:"roles" jsonschema:"each role's k, decisions, samples and cost"`
	Model       string                `json:"model" jsonschema:"the identity of the model playing the roles; when every role has its own, their distinct identities, comma-separated (role_models says which role plays which)"`
	RoleModels  map[string]string     `json:"role_models,omitempty" jsonschema:"each role's model identity, with real models"`
}

// RoleFigure is one role's share of a solve_problem run.
type RoleFigure struct {
	K         int     `json:"k" jsonschema:"the role's margin"`
	Decisions int     `json:"decisions" jsonschema:"its decisions"`
	Samples   int     `json:"samples" jsonschema:"their model calls"`
	Cost      float64 `json:"cost" jsonschema:"their cost"`
	Wrong     int     `json:"wrong" jsonschema:"decisions found wrong"`
}

func (s *Server) addProblemTool() {
	addTool(s, &mcp.Tool{
		InputSchema: problemSchema(),
		Name:        ToolSolveProblem,
		Title:       "Solve a multiplication, a sort or a problem spec's problem by voted decomposition",
		Description: `Solve a long multiplication, a list sort, or a problem of a problem spec (your own family: each role's prompt and the JSON Schemas of input and answer, inline or a file under the server's root) by voted decomposition (general MAKER): decomposition agents split the problem into subproblems and a composition, an atomicity vote says when to stop, solver agents solve the small ones, composer agents combine their answers; every decision is voted first-to-ahead-by-k with the k the plan picks for target from p. Every decision is journaled in the server's state folder before it is used; a cancelled or failed call resumes with resume: true.
Returns the answer, whether it is correct (an exact check; a spec's checker, if it has one), the samples and cost in all and per role. The tree is bounded by the server's max steps (its decisions at most). The simulated model plays a spec's roles only when the spec names a built-in family.`,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)},
	}, s.problemTool)
}

func (s *Server) problemTool(ctx context.Context, req *mcp.CallToolRequest, in SolveProblemInput) (*mcp.CallToolResult, SolveProblemOutput, error) {
	var out SolveProblemOutput
	if s.cfg.State == "" {
		return nil, out, fmt.Errorf("%w: this server has no state folder for journals, so it cannot solve problems; its operator sets one with --state", ErrNoState)
	}
	var fam decompose.Family
	var sp *problems.Spec // a problem spec's, else nil
	family, input, kinds := familyProblem(req)
	if in.Problem != nil {
		kinds++
	}
	switch {
	case kinds != 1:
		var fams []string
		for _, b := range problems.Builtins() {
			fams = append(fams, b.Name()+" "+b.Example+", ")
		}
		return nil, out, fmt.Errorf(`%w: give exactly one problem: %sor problem {"spec": {...} or "spec_path": "FILE", "input": ...}`, ErrArgument, strings.TrimSuffix(strings.Join(fams, ""), ", ")+" ")
	case family != "":
	default:
		var err error
		if sp, input, err = s.loadProblemSpec(req, in.Problem); err != nil {
			return nil, out, err
		}
		family, fam = sp.Name, sp.AsFamily()
		_, out.Checked = fam.(decompose.Checker)
	}
	if fam == nil {
		f, _ := problems.Lookup(family)
		fam, out.Checked = f, true
	}
	canon, err := fam.Canon(input)
	if err != nil {
		return nil, out, fmt.Errorf("%w: %s: %w", ErrArgument, family, err)
	}
	st, err := s.check(Sampling{Models: in.Models, BaseURL: in.BaseURL})
	if err != nil {
		return nil, out, err
	}
	o := problems.Options{Settings: decompose.Settings{Strategy: decompose.Strategy(in.Strategy), Target: in.Target}, Logger: s.log}
	o.Settings.Solver.Vote.MaxSamples = s.cfg.MaxSamples
	if in.P != 0 {
		o.Settings.P = map[decompose.Role]float64{}
		for _, r := range decompose.Roles {
			o.Settings.P[r] = in.P
		}
	}
	roleSt, allSim, err := s.checkRoleModels(in, st.models)
	if err != nil {
		return nil, out, err
	}
	if allSim {
		out.Model = "sim"
		play := decompose.SimRole{P: decompose.DefaultP, Rivals: max(s.cfg.Sim.WrongAnswers, 1)}
		if in.P != 0 {
			play.P = in.P
		}
		o.Sim = decompose.SimConfig{Seed: s.cfg.Sim.Seed, Roles: problems.SimRoles(play)}
	} else {
		o.Models, out.RoleModels = map[decompose.Role]llms.Model{}, map[string]string{}
		var base llms.Model // models', opened when a role plays it
		for _, r := range decompose.Roles {
			if rs, ok := roleSt[r]; ok {
				o.Models[r], err = s.open(rs, nil, "plays every role or none")
			} else if base == nil {
				base, err = s.open(st, nil, "plays the roles of a problem only alone (without real models in the same request)")
				o.Models[r], out.Model = base, maker.ModelIdentity(base)
			} else {
				o.Models[r] = base
			}
			if err != nil {
				return nil, out, err
			}
			out.RoleModels[string(r)] = maker.ModelIdentity(o.Models[r])
		}
		if base == nil { // every role has its own model: say theirs
			out.Model = roleModelsIdentity(out.RoleModels)
		}
	}
	// The tree is bounded before anything runs: its decisions at most
	// the server's MaxSteps.
	caps := decompose.Caps{MaxDepth: 8, MaxBreadth: 2} // decompose's defaults
	if c, ok := fam.(decompose.CapsFor); ok {
		fc := c.Caps(canon)
		caps.MaxDepth, caps.MaxBreadth = cmp.Or(fc.MaxDepth, caps.MaxDepth), cmp.Or(fc.MaxBreadth, caps.MaxBreadth)
	}
	bound, err := decompose.DecisionBound(caps, o.Settings.Strategy == decompose.StrategyFirstToK || !fam.Structured())
	total := 0
	for _, n := range bound {
		total += n
	}
	if err != nil || total > s.cfg.MaxSteps {
		return nil, out, fmt.Errorf("%w: %s: the tree may take %d decisions, over this server's bound of %d: give a smaller problem", ErrArgument, family, total, s.cfg.MaxSteps)
	}
	name := in.Journal
	if name == "" {
		settings := in // the name is of the problem and settings, not of this call's resume
		settings.Resume = false
		h := sha256.New()
		h.Write(append(append([]byte(family), canon...), settingsJSON(settings, family, input, sp == nil)...))
		if f, ok := fam.(decompose.Fingerprinter); ok {
			h.Write([]byte(f.Fingerprint())) // a spec file's text, not only its path
		}
		sum := h.Sum(nil)
		name = journalPrefix(family) + "-" + hex.EncodeToString(sum[:6]) + ".jsonl"
	} else if !journalName.MatchString(name) || name == "." || name == ".." {
		return nil, out, fmt.Errorf("%w: journal %q: give a plain file name of letters, digits, '.', '-' and '_' (it lives in the server's state folder)", ErrArgument, name)
	}
	out.Journal = name
	release, err := s.journals.acquire(ctx, name, JournalGrace)
	if err != nil {
		return nil, out, err
	}
	defer release()
	path := filepath.Join(s.cfg.State, name)
	switch {
	case in.Resume && !exists(path):
		return nil, out, fmt.Errorf("%w: journal %s: there is no run to resume; call without resume to start one", ErrArgument, name)
	case !in.Resume && exists(path):
		return nil, out, fmt.Errorf("%w: %s already exists: resume its run with resume: true, or give another journal name", journal.ErrExists, name)
	}
	o.Journal, o.JournalUnsigned = path, s.cfg.UnsignedJournals
	var res *decompose.Result
	var runErr error
	if sp != nil {
		res, runErr = problems.SolveSpec(ctx, sp, canon, o)
	} else {
		res, runErr = problems.Solve(ctx, family, canon, o)
	}
	if res != nil {
		out.fill(res)
	}
	switch {
	case runErr == nil && out.Correct:
		out.Solved = true
		out.Message = fmt.Sprintf("solved: answer %s, correct; %d samples (%d decisions read back from the journal)", abbreviate(res.Answer), res.Samples, res.Resumed)
		return nil, out, nil
	case runErr == nil && !out.Checked:
		out.Solved = true
		out.Message = fmt.Sprintf("answered: %s, not checked (the problem spec has no checker); %d samples (%d decisions read back from the journal)", abbreviate(res.Answer), res.Samples, res.Resumed)
		return nil, out, nil
	case runErr == nil:
		out.Message = fmt.Sprintf("the answer %s is wrong (%d wrong decisions, %d unprotected)", abbreviate(res.Answer), res.Wrong, res.Unprotected)
	case ctx.Err() != nil:
		return nil, out, fmt.Errorf("solve_problem cancelled; the decided decisions are in journal %s: call again with resume: true, journal %q and the same problem and settings: %w", name, name, ctx.Err())
	case errors.Is(runErr, problems.ErrNoTruth):
		return nil, out, fmt.Errorf("%w: %w: the simulated model plays a problem spec only when it names a built-in \"family\"; give models the server allows", ErrArgument, runErr)
	case errors.Is(runErr, decompose.ErrInput), errors.Is(runErr, decompose.ErrConfig), errors.Is(runErr, decompose.ErrPlan):
		return nil, out, fmt.Errorf("%w: %w", ErrArgument, runErr)
	case errors.Is(runErr, decompose.ErrJournalMismatch), errors.Is(runErr, decompose.ErrJournalCorrupt), errors.Is(runErr, decompose.ErrJournalLocked), errors.Is(runErr, decompose.ErrJournalRollback):
		return nil, out, fmt.Errorf("journal %s: %w", name, runErr)
	default:
		out.Message = fmt.Sprintf("the run failed: %v; the decided decisions are in the journal: resume with resume: true", runErr)
	}
	return failure(out.Message), out, nil
}

// problemSchema is solve_problem's input schema: SolveProblemInput's,
// with a property per built-in family (problems.Builtins) first, its
// problem's Go type's schema described by its About.
func problemSchema() *jsonschema.Schema {
	sch, err := jsonschema.For[SolveProblemInput](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: solve_problem's schema: %v", err)) // a type of this package: a bug
	}
	var order []string
	for _, b := range problems.Builtins() {
		ps, err := jsonschema.ForType(reflect.TypeOf(b.Input), &jsonschema.ForOptions{})
		if err != nil {
			panic(fmt.Sprintf("mcpserver: family %s's input schema: %v", b.Name(), err)) // a registration's bug
		}
		ps.Description = b.About
		sch.Properties[b.Name()] = ps
		order = append(order, b.Name())
	}
	sch.PropertyOrder = append(order, sch.PropertyOrder...)
	withMinimums(sch)
	portable(sch, true)
	return sch
}

// familyProblem reads a built-in family's problem from a solve_problem
// call's arguments: the family's name and the problem as sent (the first
// of the families given), and how many families' keys the call gives.
func familyProblem(req *mcp.CallToolRequest) (family string, input json.RawMessage, given int) {
	var args map[string]json.RawMessage
	if req == nil || req.Params == nil || json.Unmarshal(req.Params.Arguments, &args) != nil {
		return "", nil, 0
	}
	for _, name := range problems.Names() {
		if v, ok := args[name]; ok {
			if given++; family == "" {
				family, input = name, v
			}
		}
	}
	return family, input, given
}

// settingsJSON is the JSON of a call's settings that names its default
// journal: in's, with a built-in family's problem first, as its Go type
// encodes it (the names stay those of the versions whose input had a
// field per family).
func settingsJSON(in SolveProblemInput, family string, input json.RawMessage, builtin bool) []byte {
	b := mustJSON(in)
	if !builtin {
		return b
	}
	fb, _ := problems.LookupBuiltin(family)
	typed := reflect.New(reflect.TypeOf(fb.Input))
	_ = json.Unmarshal(input, typed.Interface()) // Canon has read it
	out := append([]byte(`{"`+family+`":`), mustJSON(typed.Interface())...)
	if len(b) > 2 {
		return append(append(out, ','), b[1:]...)
	}
	return append(out, '}')
}

func (o *SolveProblemOutput) fill(res *decompose.Result) {
	_ = json.Unmarshal(res.Answer, &o.Answer)
	o.Correct = res.Correct != nil && *res.Correct
	o.Samples, o.Cost, o.Nodes, o.Wrong, o.Unprotected, o.Resumed = res.Samples, res.Cost, res.Nodes, res.Wrong, res.Unprotected, res.Resumed
	o.Roles = map[string]RoleFigure{}
	for r, st := range res.Roles {
		o.Roles[string(r)] = RoleFigure{K: st.K, Decisions: st.Decisions, Samples: st.Samples, Cost: st.Cost, Wrong: st.Wrong}
	}
}

// roleModelsIdentity is the distinct model identities of roles, in the
// order of decompose.Roles, comma-separated.
func roleModelsIdentity(roles map[string]string) string {
	var ids []string
	for _, r := range decompose.Roles {
		if id := roles[string(r)]; !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return strings.Join(ids, ", ")
}

// checkRoleModels checks a request's role_models: known roles, each
// role's models as check does a request's models (the server's, or any
// with AllowAnyModel; its base_url), and, with models, as
// problems.RoleModels does (the simulated model plays every role or
// none). allSim says it plays every role.
func (s *Server) checkRoleModels(in SolveProblemInput, base []string) (roles map[decompose.Role]settings, allSim bool, err error) {
	roles = map[decompose.Role]settings{}
	rm := problems.RoleModels{Models: base, Roles: map[decompose.Role][]string{}}
	for name, specs := range in.RoleModels {
		r, err := problems.ParseRole(name)
		if err != nil {
			return nil, false, fmt.Errorf("%w: role_models: %w", ErrArgument, err)
		}
		if len(specs) == 0 {
			return nil, false, fmt.Errorf("%w: role_models: %s: give a model spec, or leave the role out", ErrArgument, name)
		}
		if roles[r], err = s.check(Sampling{Models: specs, BaseURL: in.BaseURL}); err != nil {
			return nil, false, fmt.Errorf("role_models: %s: %w", name, err)
		}
		rm.Roles[r] = specs
	}
	if fe := fielderr.As(rm.Validate()); fe != nil { // "Models", or "Roles[ROLE]"
		where := "models"
		if role, ok := strings.CutPrefix(fe.Fields[0].Name, "Roles["); ok {
			where = "role_models: " + strings.TrimSuffix(role, "]")
		}
		return nil, false, fmt.Errorf("%w: %s: %s", ErrArgument, where, fe.Remedy())
	}
	return roles, rm.Sim(), nil
}

// loadProblemSpec reads a problem's spec, inline (exactly as sent) or
// from a file under the server's root (readSpecFile), and its input as
// sent (numbers exact).
func (s *Server) loadProblemSpec(req *mcp.CallToolRequest, p *SpecProblem) (*problems.Spec, json.RawMessage, error) {
	var raw struct {
		Problem struct {
			Spec  json.RawMessage `json:"spec"`
			Input json.RawMessage `json:"input"`
		} `json:"problem"`
	}
	if req == nil || req.Params == nil || json.Unmarshal(req.Params.Arguments, &raw) != nil {
		raw.Problem.Spec, raw.Problem.Input = nil, nil
		if p.Spec != nil {
			raw.Problem.Spec = mustJSON(p.Spec)
		}
		if p.Input != nil {
			raw.Problem.Input = mustJSON(p.Input)
		}
	}
	hasSpec := len(raw.Problem.Spec) > 0 && string(raw.Problem.Spec) != "null"
	switch {
	case hasSpec && p.SpecPath != "":
		return nil, nil, fmt.Errorf("%w: problem: give spec or spec_path, not both", ErrArgument)
	case !hasSpec && p.SpecPath == "":
		return nil, nil, fmt.Errorf("%w: problem: give its spec: spec (a JSON object) or spec_path (a file under the server's root)", ErrArgument)
	case len(raw.Problem.Input) == 0 || string(raw.Problem.Input) == "null":
		return nil, nil, fmt.Errorf("%w: problem: give input, the problem as the spec's input schema says", ErrArgument)
	}
	b, where := []byte(raw.Problem.Spec), "problem: spec"
	if !hasSpec {
		var err error
		if b, err = s.readSpecFile(p.SpecPath); err != nil {
			return nil, nil, err
		}
		where = fmt.Sprintf("problem: spec_path %q", p.SpecPath)
	}
	sp, err := problems.ParseSpec(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrArgument, where, err)
	}
	return sp, raw.Problem.Input, nil
}

// journalPrefix is a family's name as the start of a journal's file name.
func journalPrefix(family string) string {
	name := strings.Trim(unsafeName.ReplaceAllString(family, "-"), ".-_")
	if name == "" {
		name = "problem"
	}
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v) // plain structs of strings and numbers
	return b
}
