package problems

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/sim"
)

// Config is a run of Solve as a person gives it, flat: one p for every
// role with roles' own over it, fixed k and prices by role name, the
// roles' model specs, the simulated model's knobs and the journal file.
// Options checks it and makes the Options of the run: what maker
// multiply, sort and problem map their flags to.
type Config struct {
	// Settings are the decomposition's; Options sets their P, K and
	// Prices from the fields below.
	Settings decompose.Settings `flags:""`
	// P is every role's p; RoleP are roles' own, over it.
	P     float64 `flag:"p" usage:"every role's p: the simulated model's chance that a valid reply is right, and the p the plan chooses k for (with a real model: your estimate of it)"`
	RoleP map[decompose.Role]float64
	// K fixes roles' k by role name (ParseRole); Prices are roles' prices
	// by role name or "all" (RolePrices).
	K      map[string]int    `flag:"k" usage:"fix roles' k instead of the plan's (auto): ROLE=K[,ROLE=K], roles atomic, decompose, discriminate, solve, compose"`
	Prices map[string]string `flag:"price" usage:"roles' prices in dollars per million input/output tokens: ROLE=IN/OUT[,ROLE=IN/OUT], ROLE a role or all; over a model spec's own price (the simulated model's is 0)"`
	// Models are the roles' model specs, opened with Open.
	Models RoleModels `flags:""`
	Open   models.Options
	// Rivals, CoFailure, FlagRate and Latency are the simulated model's
	// (decompose.SimRole and SimConfig), when it plays every role.
	Rivals    int           `flag:"rivals" usage:"simulated model: distinct wrong answers each role's errors spread over (1 = all errors alike)"`
	CoFailure float64       `flag:"cofailure" usage:"simulated model: share of nodes, 0 to 1, where every role's wrong replies agree and the wrong answer is the likely one: no margin protects them; the result counts them (unprotected)"`
	FlagRate  float64       `flag:"flag-rate" usage:"simulated model: probability of a red-flag reply"`
	Latency   time.Duration `flag:"latency" usage:"simulated model: latency of a call"`
	// Journal is the journal file: created, or resumed with Resume.
	Journal         string `flag:"journal" usage:"journal FILE: every decision, written and synced before it is used; a killed run resumes from it with --resume"`
	Resume          bool   `flag:"resume" usage:"resume the run recorded in --journal (same problem and flags)"`
	JournalUnsigned bool   `flag:"journal-unsigned" usage:"write (or resume) the journal without signing it"`
}

// DefaultConfig is the Config of a command's defaults (maker multiply,
// sort, problem), written out: every role on the simulated model at
// decompose.DefaultP, the default target and strategy, seed 1.
func DefaultConfig() Config {
	return Config{Settings: decompose.Settings{Target: decompose.DefaultTarget, Strategy: decompose.StrategyAhead, Seed: 1}, P: decompose.DefaultP,
		Rivals: sim.DefaultWrongAnswers, Models: RoleModels{Models: []string{"sim"}}, Open: models.Options{Timeout: models.DefaultTimeout}}
}

// configName is where Config's field errors come from.
const configName = "problems.Config"

// Options checks what c alone can say and makes the Options of its run:
// each role's p, fixed k and price; the roles' models opened (no call is
// made), or, when the simulated model plays every role, its settings at
// each role's p and Settings.Seed. The decomposition's settings are
// Solve's to check.
//
// Errors: a *fielderr.Error wrapping ErrConfig that names the field: "P"
// (at most 1/2 or over 1; 0 is decompose.DefaultP), "K"
// (a role that is not one), "Prices" (RolePrices' error), "Resume"
// without a Journal, "Journal" when the file exists without Resume (a run
// never overwrites a journal) or is missing with Resume; or
// RoleModels.Open's ("Models", "Roles[ROLE]"). Cost: one stat of Journal.
func (c Config) Options() (Options, error) {
	o := Options{Settings: c.Settings, Journal: c.Journal, JournalUnsigned: c.JournalUnsigned}
	s := &o.Settings
	s.P, s.K = map[decompose.Role]float64{}, nil
	p := cmp.Or(c.P, decompose.DefaultP)
	if !(p > 0.5 && p <= 1) {
		return o, fielderr.New(configName, "P", c.P, "use a p above 1/2 (no margin helps at or below it)")
	}
	for _, r := range decompose.Roles {
		s.P[r] = p
	}
	maps.Copy(s.P, c.RoleP)
	for name, k := range c.K {
		r, err := ParseRole(name)
		if err != nil {
			return o, fielderr.Of(configName, "K", fmt.Sprintf("%s=%d", name, k), err)
		}
		if s.K == nil {
			s.K = map[decompose.Role]int{}
		}
		s.K[r] = k
	}
	var err error
	if s.Prices, err = RolePrices(c.Prices); err != nil {
		return o, fielderr.Of(configName, "Prices", nil, err)
	}
	if err := c.checkJournal(); err != nil {
		return o, err
	}
	if !c.Models.Sim() {
		o.Models, err = c.Models.Open(c.Open)
		return o, err
	}
	o.Sim = decompose.SimConfig{Seed: s.Seed, FlagRate: c.FlagRate, Latency: sim.FixedLatency(c.Latency), Roles: map[decompose.Role]decompose.SimRole{}}
	for r, p := range s.P {
		o.Sim.Roles[r] = decompose.SimRole{P: p, Rivals: c.Rivals, CoFailure: c.CoFailure}
	}
	return o, nil
}

// checkJournal refuses a Journal that does not fit Resume.
func (c Config) checkJournal() error {
	if c.Journal == "" {
		if c.Resume {
			return fielderr.New(configName, "Resume", nil, "needs a Journal: the journal of the run to resume")
		}
		return nil
	}
	_, err := os.Stat(c.Journal)
	switch {
	case err == nil && !c.Resume:
		return fielderr.New(configName, "Journal", c.Journal, "exists: add Resume to resume that run, or name another file")
	case errors.Is(err, os.ErrNotExist) && c.Resume:
		return fielderr.New(configName, "Journal", c.Journal, "does not exist: nothing to Resume; leave Resume out to start the run")
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fielderr.Of(configName, "Journal", c.Journal, err)
	}
	return nil
}
