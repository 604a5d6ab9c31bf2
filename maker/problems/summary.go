package problems

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/decompose"
)

// Summary is a run's decompose.Result with its verdict: whether the run
// solved the problem and, if not, why. It is the --json output of maker
// multiply, sort and problem.
type Summary struct {
	Solved bool   `json:"solved"`
	Error  string `json:"error,omitempty"`
	*decompose.Result
	// WallSeconds and CriticalPathSeconds are Result's durations in seconds.
	WallSeconds         float64 `json:"wall_seconds"`
	CriticalPathSeconds float64 `json:"critical_path_seconds"`
}

// ErrWrong: the tree finished, but its answer failed the family's check.
var ErrWrong = errors.New("the answer is wrong")

// Summarize is the Summary of a run that returned res (not nil) and err.
// Solved means no error and an answer checked correct, or, with
// unchecked, an answer without a check (a problem spec without a
// checker). Error is err's text, or ErrWrong's for an answer the check
// refused.
func Summarize(res *decompose.Result, err error, unchecked bool) Summary {
	s := Summary{Result: res, Solved: err == nil && (res.Correct != nil && *res.Correct || unchecked && res.Correct == nil),
		WallSeconds: res.Wall.Seconds(), CriticalPathSeconds: res.CriticalPath.Seconds()}
	if err != nil {
		s.Error = err.Error()
	} else if !s.Solved {
		s.Error = ErrWrong.Error()
	}
	return s
}

// WriteText writes s for a person: a headline of what was solved (what)
// by which models, the answer and its check, the counts, the plan and a
// table of the roles.
func (s Summary) WriteText(w io.Writer, what string, models []string) {
	correct := "not checked"
	if s.Correct != nil {
		correct = map[bool]string{true: "correct", false: "WRONG"}[*s.Correct]
	}
	if s.Answer != nil {
		fmt.Fprintf(w, "%s (model %s): answer %s, %s\n", what, strings.Join(models, ","), s.Answer, correct)
	} else {
		fmt.Fprintf(w, "%s (model %s): no answer: %s\n", what, strings.Join(models, ","), s.Error)
	}
	fmt.Fprintf(w, "%d nodes, depth %d; %d samples, $%.4f; %d wrong decisions, %d unprotected; %d resumed from the journal\n",
		s.Nodes, s.Depth, s.Samples, s.Cost, s.Wrong, s.Unprotected, s.Resumed)
	fmt.Fprintf(w, "plan: T %v, %d decisions at most, each failing at most %.3g\n", s.Plan.Target, s.Plan.Decisions, s.Plan.PerDecision)
	fmt.Fprintf(w, "%-13s %3s %9s %8s %10s %6s %11s\n", "role", "k", "decisions", "samples", "cost", "wrong", "unprotected")
	for _, r := range decompose.Roles {
		if st := s.Roles[r]; st != nil {
			fmt.Fprintf(w, "%-13s %3d %9d %8d %10.4f %6d %11d\n", r, st.K, st.Decisions, st.Samples, st.Cost, st.Wrong, st.Unprotected)
		}
	}
}

// IsInputError reports whether err, of Solve or SolveSpec, is one of bad
// input or settings rather than of the run: the problem, the settings,
// the plan, the family, the spec, a journal of another run, corrupt,
// locked or rolled back.
func IsInputError(err error) bool {
	for _, e := range []error{decompose.ErrInput, decompose.ErrConfig, decompose.ErrPlan, ErrFamily, decompose.ErrJournalMismatch,
		decompose.ErrJournalCorrupt, decompose.ErrJournalLocked, decompose.ErrJournalRollback, ErrNoTruth, ErrSpec} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// MaxPrice bounds a price in dollars per million tokens, against typos.
const MaxPrice = 1e6

// RolePrices reads roles' prices: ROLE to "IN/OUT", dollars per million
// input and output tokens from 0 to MaxPrice, ROLE a role's name or "all"
// (every role not named itself). It returns nil for no prices. Errors
// wrap decompose.ErrConfig and begin with the entry they refuse,
// "solve=x: ...".
func RolePrices(prices map[string]string) (map[decompose.Role]maker.Price, error) {
	out := map[decompose.Role]maker.Price{}
	for name, v := range prices {
		in, outP, ok := strings.Cut(v, "/")
		a, err1 := strconv.ParseFloat(in, 64)
		b, err2 := strconv.ParseFloat(outP, 64)
		if !ok || err1 != nil || err2 != nil || !(a >= 0 && b >= 0 && a <= MaxPrice && b <= MaxPrice) {
			return nil, fmt.Errorf("%s=%s: %w: give IN/OUT, dollars per million input and output tokens from 0 to %v, such as %s=0.4/1.6", name, v, decompose.ErrConfig, float64(MaxPrice), name)
		}
		p := maker.Price{InputPerMillion: a, OutputPerMillion: b}
		if name == "all" {
			for _, r := range decompose.Roles {
				if _, given := prices[string(r)]; !given {
					out[r] = p
				}
			}
			continue
		}
		r, err := ParseRole(name)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w (or all)", name, v, err)
		}
		out[r] = p
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
