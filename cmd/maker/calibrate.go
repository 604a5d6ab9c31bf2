package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/mdap-go/mdap/internal/flagbind"
	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/mdap-go/mdap/maker/progress"
	"github.com/spf13/cobra"
)

// calibrateFlags are maker calibrate's flags: the run flags (the model,
// the sim, --target), the tools (a spec's), and its own, most of them set
// straight into calibrate.Config, which checks itself.
type calibrateFlags struct {
	run      runFlags
	tools    toolFlags
	cfg      calibrate.Config
	Disks    int                  `flag:"disks" usage:"Towers of Hanoi with N disks (2^N-1 steps, the run k_min is planned for), 1 to {max}"`
	SpecFile string               `flag:"spec" usage:"calibrate on a spec FILE's task instead (its script gives each step's correct reply)"`
	JSON     bool                 `flag:"json" usage:"print the report as JSON on stdout"`
	roles    problems.RolesConfig // --roles: a decomposition's roles (calibrateroles.go)
}

// notForCalibrate are the run flags that decide steps, which a calibration
// does not do.
var notForCalibrate = []string{"journal", "journal-unsigned", "resume", "rerun-pending", "parallel", "max-samples", "max-errors", "k-floor", "k-max", "verbose", "escalate", "escalate-after", "escalate-k", "escalate-model"}

// calibrateFlagOf names the flag of each calibrate.Config field maker
// calibrate sets from the run flags (its own fields' are their tags').
var calibrateFlagOf = flagbind.Names(map[string]string{"Target": "target", "MaxCost": "max-cost"}, calibrate.Config{})

func newCalibrate() *cobra.Command {
	c := &calibrateFlags{cfg: calibrate.DefaultConfig()}
	cmd := &cobra.Command{
		Use:     "calibrate",
		Short:   "Estimate p on sampled steps: k_min and the expected cost before a run",
		Long:    help("calibrate"),
		Example: example("calibrate"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if given(cmd.Flags(), "roles", "roles-size", "roles-problems", "roles-nodes") != "" {
				return c.calibrateRoles(cmd)
			}
			if err := c.check(cmd); err != nil {
				return err
			}
			return c.calibrate(cmd)
		},
	}
	c.register(cmd)
	c.registerRoles(cmd.Flags())
	return cmd
}

func (c *calibrateFlags) register(cmd *cobra.Command) {
	fs, cfg := cmd.Flags(), &c.cfg
	c.Disks = 10
	flagbind.Usage{"max": strconv.Itoa(hanoi.MaxDisks)}.Bind(fs, c)
	flagbind.Bind(fs, cfg)
	c.run.register(cmd)
	c.tools.register(cmd, "", &c.run.cfg.ToolDeclaration)
	fs.Lookup("root").Usage = `with --spec: folder granted to the file tools (default: the spec file's folder); they work in the spec's "root" inside it, as in maker run`
	fs.Lookup("target").Usage = "probability that the whole run succeeds that k_min is planned for, in (0, 1), at every point of the --confidence region of (mean p, spread of step difficulty); exit 1 when no k reaches it or the samples cannot tell (undecided)"
	fs.Lookup("k").Usage = "also show what this margin would give"
	fs.Lookup("max-cost").Usage = "spending cap in US dollars for the calibration: a sample whose worst case (prompt plus --max-tokens) would pass it is not started, and calibrate stops there with exit 1 and the dollars spent (0: no cap)"
	fs.Lookup("k").DefValue = ""
	for _, name := range notForCalibrate {
		_ = fs.MarkHidden(name) // refused if given: see check
	}
}

// check refuses flags that do not go together, then what the run flags
// refuse, said in flags.
func (c *calibrateFlags) check(cmd *cobra.Command) error {
	fs, cfg := cmd.Flags(), &c.cfg
	if name := given(fs, notForCalibrate...); name != "" {
		return usageErr("--%s does not apply to maker calibrate: it decides no step, it samples them", name)
	}
	c.run.usesTarget = true
	if err := c.run.validate(cmd); err != nil {
		return err
	}
	switch {
	case c.run.Settings.Margin.Auto:
		return usageErr("--k auto does not apply to maker calibrate: give a fixed --k to see what it would give, or none")
	case fs.Changed("until-max-samples") && !cfg.UntilDecided:
		return usageErr("--until-max-samples caps --until-decided: give --until-decided too, or leave it out")
	case fs.Changed("disks") && c.SpecFile != "":
		return usageErr("--disks and --spec: give one task, Towers of Hanoi (--disks) or a spec file (--spec)")
	case c.SpecFile == "" && given(fs, "root", "tools", "tool-declaration") != "":
		return usageErr("--root, --tools and --tool-declaration apply to --spec only: Towers of Hanoi has no tools")
	}
	if err := positiveFlags(fs, "steps-sampled", "samples", "confidence", "concurrency", "until-max-samples"); err != nil {
		return err
	}
	cfg.Target, cfg.SamplesPerCall, cfg.MaxCost = c.run.Settings.Target, c.run.cfg.SamplesPerCall, c.run.MaxCost
	if fs.Changed("k") {
		cfg.K = c.run.cfg.Vote.K
	}
	return nil // calibrate.Config checks itself once its task is open (calibrate)
}

// task opens the task to calibrate on: Towers of Hanoi, or a spec opened
// as maker run opens it (calibrate.OpenSpec). The caller closes it.
func (c *calibrateFlags) task(cmd *cobra.Command) (calibrate.Task, error) {
	if c.SpecFile == "" {
		t, err := calibrate.OpenHanoi(c.Disks)
		return t, fieldUsageErr(err, disksFlagOf, "--disks")
	}
	sandbox := grantedRoot(cmd, &c.tools)
	t, err := calibrate.OpenSpec(c.SpecFile, sandbox, c.tools.selection)
	if err != nil {
		return t, specOpenErr(err, sandbox, "--spec: ")
	}
	return t, nil
}

// calibrate samples the task's steps and prints the report.
func (c *calibrateFlags) calibrate(cmd *cobra.Command) error {
	t, err := c.task(cmd)
	if err != nil {
		return err
	}
	defer func() { _ = t.Close() }()
	cfg := c.cfg
	cfg.Steps = t.Steps // for Validate to count the first round
	if err := fieldUsageErr(cfg.Validate(), calibrateFlagOf, "calibrate"); err != nil {
		return err
	}
	if cfg.Solver, err = c.run.solver(t.Oracle, cmd.ErrOrStderr(), solverWith{tools: t.Tools}); err != nil {
		return err
	}
	bar := progress.NewRounds(cmd.ErrOrStderr(), c.run.Settings.Progress)
	bar.Start(min(cfg.StepsSampled, t.Steps.Total()) * cfg.Samples)
	cfg.Progress = bar.Set
	if cfg.UntilDecided {
		cfg.Forecast = func(r calibrate.Round) {
			bar.Finish()
			fmt.Fprintln(cmd.ErrOrStderr(), "maker calibrate: "+r.String())
			bar.Start(r.Samples)
		}
	}
	rep, runErr := calibrate.Run(cmd.Context(), cfg)
	bar.Finish()
	if runErr != nil && cmd.Context().Err() != nil {
		return interrupted("")
	}
	if runErr != nil && (len(rep.Models) == 0 || errors.Is(runErr, calibrate.ErrBudget)) {
		return failed(runErr)
	}
	if out := cmd.OutOrStdout(); c.JSON {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
	} else {
		fmt.Fprint(out, rep.String()+calibrate.Ranking(rep.Models))
	}
	switch {
	case runErr != nil:
		return failed(runErr)
	case rep.All.Unreachable, rep.All.Undecided: // the report says why; so does the exit
		msg := rep.All.NoK
		if rep.Stopped != "" {
			msg += "; --until-decided stopped: " + rep.Stopped
		}
		return failed(errors.New(msg))
	}
	return nil
}
