package decompose

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/mdap-go/mdap/executor"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	mjournal "github.com/mdap-go/mdap/maker/journal"
	"github.com/tmc/langchaingo/llms"
)

// ErrConfig: a setting is out of range (a *maker.FieldError naming it).
var ErrConfig = fielderr.ErrConfig

// Strategy is how decisions are voted.
type Strategy string

// The strategies.
const (
	// StrategyAhead is mdap's: every decision first-to-ahead-by-k, with
	// the k of the Plan; unstructured proposals picked by discriminators
	// shown the candidates in a fresh shuffled order each vote.
	StrategyAhead Strategy = "ahead"
	// StrategyFirstToK is the authors' scheme, as a baseline: 2K−1
	// proposals sampled, a discriminator votes a candidate's index
	// first-to-K with the candidates in the same order every vote;
	// atomicity, solutions and compositions are voted first-to-K on their
	// keys. K is the Plan's k of each role.
	StrategyFirstToK Strategy = "first-to-k"
)

// DefaultTarget is T when Settings.Target is 0.
const DefaultTarget = 0.95

// DefaultP is a role's p when Settings.P does not name it.
const DefaultP = 0.9

// DefaultParallel is Settings.Parallel's default.
const DefaultParallel = 64

// Settings are what a decomposition is set to; the zero value works
// (strategy ahead, T 0.95, every role at p 0.9, the family's caps).
type Settings struct {
	// Strategy: StrategyAhead ("" too) or StrategyFirstToK.
	Strategy Strategy `json:"strategy" flag:"strategy" usage:"how decisions are voted: ahead (first-to-ahead-by-k, candidates shuffled per vote) or first-to-k (the MAKER authors' scheme: 2K-1 proposals, a discriminator votes an index first-to-K)"`
	// Target is T, the probability the tree should be right with; 0
	// means DefaultTarget.
	Target float64 `json:"target" flag:"target" usage:"T: the whole tree is right with probability at least T while every role decides right with its p, independently; the plan spreads 1-T over the tree's decisions and picks each role's k"`
	// P is each role's p (for the Plan); a role not named has DefaultP.
	P map[Role]float64 `json:"p,omitempty"`
	// K fixes a role's k instead of the Plan's.
	K map[Role]int `json:"k,omitempty"`
	// Caps bound the tree; zero fields take the family's (a CapsFor
	// family) or depth 8, breadth 2.
	Caps Caps `json:"caps" flags:"Caps."`
	// Discriminate votes proposals by discriminators even for a
	// structured family.
	Discriminate bool `json:"discriminate,omitempty" flag:"discriminate" usage:"vote proposals by discriminator agents even though the family's proposals have exact keys"`
	// Parallel bounds the decisions in flight at once (siblings run
	// concurrently); 0 means DefaultParallel.
	Parallel int `json:"parallel" flag:"parallel" usage:"most decisions in flight at once, siblings in parallel (0: 64); results do not depend on it"`
	// Seed seeds the discriminators' shuffles.
	Seed uint64 `json:"seed" flag:"seed" usage:"seed of the generated problem (--digits, --length), of the simulated model and of the discriminators' shuffles"`
	// ToolSteps bounds the tool calls of one solve decision (with
	// Config.Executor); 0 means DefaultToolSteps.
	ToolSteps int `json:"tool_steps,omitempty"`
	// Prices are the roles' own prices (each role may run a model of its
	// own): a role's samples cost Prices[role] when it is set, else the
	// role's model's own price (a maker.Priced model, as models.Open
	// makes from a spec's =IN/OUT), else Solver.Price. An ensemble's
	// members are priced at Prices[role] or Solver.Price.
	Prices map[Role]maker.Price `json:"prices,omitempty"`
	// Solver is each decision's race settings (MaxTokens, Flags,
	// Escalation, Timeout, Price, Vote budgets...); Vote.K is replaced by
	// the role's k, Price by the role's price (Prices).
	Solver maker.Config `json:"-" flags:""`
}

// CapsFor is a Family that suggests caps for an input: enough for its
// right tree, with room for a wrong split.
type CapsFor interface {
	Caps(input json.RawMessage) Caps
}

// CoFailures says at which (role, node) the simulated model's errors are
// co-failed (see SimRole.CoFailure); SimModels implements it.
type CoFailures interface {
	CoFailed(r Role, node string) bool
}

// Config is a decomposition: its Settings and what runs them.
type Config struct {
	Settings
	// Models holds each role's model; the roles the strategy uses are
	// required (RoleDiscriminate only when proposals are discriminated or
	// for StrategyFirstToK).
	Models map[Role]llms.Model
	// Journal, if set, is the journal file's path: created when absent,
	// resumed when present (of the same problem and settings).
	Journal string
	// JournalStore, if set instead of Journal, keeps the journal's lines
	// (a task's journal on the NATS engine: cluster.TaskDecisionStore):
	// a new journal when it is empty, resumed when it holds one, as a
	// file. Its exclusion is the store's; each line is stored (Append,
	// then Sync) before its decision is used. Solve closes it, whatever
	// it returns.
	JournalStore mjournal.Store
	// JournalUnsigned opts out of signing the journal; JournalKey is the
	// signing key (else journal.KeyEnv, else the state folder's).
	JournalUnsigned bool
	JournalKey      []byte
	// Truth, if set, counts wrong decisions (the simulated model's
	// family truth); CoFailures, if set, counts co-failed ones.
	Truth      Truth
	CoFailures CoFailures
	// Executor, if set, runs the tool calls that solver agents' winning
	// replies propose (read-only tools only: a solve decision a kill
	// interrupts is decided again on resume, its calls included), and
	// Tools are declared to them, as maker.Solver's Executor and Tools.
	// A solve decision then takes up to Settings.ToolSteps tool steps,
	// each voted, before its voted answer.
	Executor *executor.Executor
	Tools    []llms.Tool
	// Logger receives debug logs of decisions; nil means none.
	Logger *slog.Logger
}

// DefaultToolSteps is Settings.ToolSteps' default.
const DefaultToolSteps = 4

// checkTools refuses an executor that would run a tool with side effects.
func (c Config) checkTools() error {
	if c.Executor == nil {
		return nil
	}
	for _, name := range c.Executor.Registered() {
		entry, ok := c.Executor.Lookup(name)
		if ok && c.Executor.Policy().Allows(entry) == nil && !c.Executor.ReadOnly(name) {
			return &fielderr.Error{Config: "decompose.Config", Fields: []fielderr.Field{{Name: "Executor", Value: name}},
				Fix: "allow read-only tools only (a solve decision that a kill interrupts is decided again on resume, its tool calls included)"}
		}
	}
	return nil
}

// withDefaults fills the zero settings and checks the rest.
func (s Settings) withDefaults(fam Family, input json.RawMessage) (Settings, error) {
	bad := func(field string, v any, fix string) error {
		return &fielderr.Error{Config: "decompose.Settings", Fields: []fielderr.Field{{Name: field, Value: v}}, Fix: fix}
	}
	switch s.Strategy {
	case "":
		s.Strategy = StrategyAhead
	case StrategyAhead, StrategyFirstToK:
	default:
		return s, bad("Strategy", s.Strategy, `use "ahead" or "first-to-k"`)
	}
	if s.Target == 0 {
		s.Target = DefaultTarget
	}
	if !(s.Target > 0 && s.Target < 1) {
		return s, bad("Target", s.Target, "use a probability between 0 and 1")
	}
	p := map[Role]float64{}
	for _, r := range Roles {
		p[r] = DefaultP
	}
	for _, r := range slices.Sorted(maps.Keys(s.P)) { // the same error for the same settings
		if v := s.P[r]; !(v > 0.5 && v <= 1) {
			return s, bad("P["+string(r)+"]", v, "use a p above 1/2 (no margin helps at or below it)")
		}
	}
	maps.Copy(p, s.P)
	s.P = p
	for r, k := range s.K {
		if k < 1 {
			return s, bad("K["+string(r)+"]", k, "use a k of at least 1")
		}
	}
	if c, ok := fam.(CapsFor); ok && (s.Caps.MaxDepth == 0 || s.Caps.MaxBreadth == 0) {
		fc := c.Caps(input)
		if s.Caps.MaxDepth == 0 {
			s.Caps.MaxDepth = fc.MaxDepth
		}
		if s.Caps.MaxBreadth == 0 {
			s.Caps.MaxBreadth = fc.MaxBreadth
		}
	}
	if s.Caps.MaxDepth == 0 {
		s.Caps.MaxDepth = 8
	}
	if s.Caps.MaxBreadth == 0 {
		s.Caps.MaxBreadth = 2
	}
	if s.Caps.MaxDepth < 0 || s.Caps.MaxDepth > 30 {
		return s, bad("Caps.MaxDepth", s.Caps.MaxDepth, "use a depth from 1 to 30")
	}
	if s.Caps.MaxBreadth < 2 || s.Caps.MaxBreadth > 64 {
		return s, bad("Caps.MaxBreadth", s.Caps.MaxBreadth, "use a breadth from 2 to 64")
	}
	if s.Parallel == 0 {
		s.Parallel = DefaultParallel
	}
	if s.ToolSteps == 0 {
		s.ToolSteps = DefaultToolSteps
	}
	if s.ToolSteps < 0 {
		return s, bad("ToolSteps", s.ToolSteps, "use at least 1")
	}
	for r, pr := range s.Prices {
		if pr.InputPerMillion < 0 || pr.OutputPerMillion < 0 || pr.CachedInputPerMillion < 0 || pr.CacheWritePerMillion < 0 {
			return s, bad("Prices["+string(r)+"]", pr, "use prices of at least 0 dollars per million tokens")
		}
	}
	if s.Parallel < 1 {
		return s, bad("Parallel", s.Parallel, "use at least 1")
	}
	if err := s.Solver.Validate(); err != nil {
		return s, err
	}
	return s, nil
}

// discriminates reports whether proposals go to discriminators.
func (s Settings) discriminates(fam Family) bool {
	return s.Strategy == StrategyFirstToK || s.Discriminate || !fam.Structured()
}

// Fingerprinter is a Family whose decisions depend on more than its name
// and prompts (a family read from a file): its Fingerprint joins the
// journal's, so that a journal is not resumed with another.
type Fingerprinter interface {
	Fingerprint() string
}

func familyPrint(fam Family) string {
	if f, ok := fam.(Fingerprinter); ok {
		return f.Fingerprint()
	}
	return ""
}

// fingerprint names what determines a run's decisions, for the journal:
// not Parallel, which changes no decision.
func fingerprint(fam Family, input json.RawMessage, s Settings, pl Plan, models map[Role]llms.Model) string {
	s.Parallel = 0
	ids := map[Role]string{}
	for r, m := range models {
		ids[r] = maker.ModelIdentity(m)
	}
	b, _ := json.Marshal(struct {
		Family   string
		Input    json.RawMessage
		Settings Settings
		K        map[Role]int
		Models   map[Role]string
		Prompts  Prompts
		Solver   string
		Spec     string `json:",omitempty"`
	}{fam.Name(), input, s, pl.K, ids, fam.Prompts(), fmt.Sprint(s.Solver.MaxTokens, s.Solver.Flags, s.Solver.Vote.MaxSamples, s.Solver.Price), familyPrint(fam)})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
