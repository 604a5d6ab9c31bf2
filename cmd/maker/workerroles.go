package main

import (
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/spf13/pflag"
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

// simRoles is the simulated model of every role of a family's voted
// decompositions (multiply or sort) that maker worker --model sim
// --roles FAMILY serves and maker solve --nats --model sim draws its
// lines of that family from (problems.SimModels, cluster.Drawer.SimRoleModels):
// --seed, every role as rolesPlay, red flags at --flag-rate (none when
// not given), each call taking --latency. Its route names the family, the
// seed, the play and the flag rate: a coordinator finds the workers
// started with the same flags (and --seed the line's seed).
func simRoles(run *runFlags, fs *pflag.FlagSet) decompose.SimConfig {
	cfg := decompose.SimConfig{Seed: run.Sim.Seed, Roles: problems.SimRoles(rolesPlay(run, fs)), Latency: run.SimConfig().Latency}
	if fs.Changed("flag-rate") { // else none, as the lines' roles in process
		cfg.FlagRate = run.Sim.FlagRate
	}
	return cfg
}
