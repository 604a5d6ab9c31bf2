package main

import (
	"errors"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/batch"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"
)

// rolesPlay is how --model sim plays every role of a decomposition: at
// --p (decompose.DefaultP when not given) with --wrong-answers rivals
// (sim.DefaultWrongAnswers when not given). maker solve's multiply and
// sort lines in process, maker worker --roles and maker solve --nats over
// such workers share it.
func rolesPlay(run *runFlags, fs *pflag.FlagSet) decompose.SimRole {
	play := decompose.SimRole{P: decompose.DefaultP, Rivals: sim.DefaultWrongAnswers}
	if fs.Changed("p") {
		play.P = run.Sim.P
	}
	if fs.Changed("wrong-answers") {
		play.Rivals = run.Sim.WrongAnswers
	}
	return play
}

// simRoles is the simulated model of every role of family's voted
// decompositions (multiply or sort) that maker worker --model sim
// --roles FAMILY serves and maker solve --nats --model sim draws its
// lines of that family from: seed, every role as rolesPlay, red flags at
// --flag-rate (none when not given), each call taking --latency. Its route is the identity of
// its SimModels.OneModel, which names the family, the seed, the play and
// the flag rate: a coordinator finds the workers started with the same
// flags (and --seed the line's seed). Errors: problems.ErrFamily;
// decompose.NewSim's.
func simRoles(run *runFlags, fs *pflag.FlagSet, family string, seed uint64) (*decompose.SimModels, error) {
	fam, err := problems.Lookup(family)
	if err != nil {
		return nil, err
	}
	cfg := decompose.SimConfig{Seed: seed, Roles: problems.SimRoles(rolesPlay(run, fs)), Latency: run.SimConfig().Latency}
	if fs.Changed("flag-rate") { // else none, as the lines' roles in process
		cfg.FlagRate = run.Sim.FlagRate
	}
	return decompose.NewSim(fam, fam, cfg)
}

// natsSimRoles is every role's model of a multiply or sort line of maker
// solve --nats --model sim: the engine's remote model of the route of
// the workers started with --model sim --roles FAMILY and the line's
// seed (simRoles). A "problem" line is refused: the workers play the
// built-in families, not a spec's prompts.
func natsSimRoles(run *runFlags, fs *pflag.FlagSet, b *batch.Builtin, job batch.Job) (map[decompose.Role]llms.Model, error) {
	if job.Kind() == "problem" {
		return nil, errors.New(`a "problem" task over --nats needs a real --model: the workers' simulated model (maker worker --roles) plays the roles of multiply and sort, not a problem spec's; run it without --nats, or with the --model the workers serve`)
	}
	seed := b.Seed
	if job.Seed != nil {
		seed = *job.Seed
	}
	sims, err := simRoles(run, fs, job.Kind(), seed)
	if err != nil {
		return nil, err
	}
	m, err := run.drawer.SpecModel(maker.ModelIdentity(sims.OneModel()), run.oneModel(), run.cfg.Price.InputPerMillion, run.cfg.Price.OutputPerMillion)
	if err != nil {
		return nil, err
	}
	return decompose.AllRoles(m), nil
}
