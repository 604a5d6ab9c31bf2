package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/calibrate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func calibrateJSON(t *testing.T, args ...string) calibrate.Report {
	t.Helper()
	code, out, errOut := childCLI(t, append([]string{"calibrate", "--json", "--progress", "off"}, args...)...)
	require.Contains(t, []int{0, 1}, code, errOut)
	var raw struct {
		All map[string]any `json:"all"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &raw), out)
	if code == 1 { // undecided or no k: k_min is null
		assert.Nil(t, raw.All["k_min"], out)
		assert.True(t, raw.All["undecided"] == true || raw.All["unreachable"] == true, out)
	}
	var rep calibrate.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	return rep
}

func TestCalibrateContainsTheTrueP(t *testing.T) {
	t.Parallel()
	rep := calibrateJSON(t, "--disks", "20", "--p", "0.99")
	e := rep.All
	assert.Equal(t, 1<<20-1, rep.Total)
	assert.Len(t, rep.Sampled, calibrate.DefaultStepsSampled)
	assert.Equal(t, calibrate.DefaultStepsSampled*calibrate.DefaultSamples, e.Samples)
	assert.LessOrEqual(t, e.Low, 0.99)
	assert.GreaterOrEqual(t, e.High, 0.99)
	assert.Equal(t, "beta-binomial profile likelihood", rep.Interval)
	// A million steps from 100 sampled ones: undecided, with a forecast.
	assert.True(t, e.Undecided)
	assert.Zero(t, e.KMin)
	assert.Nil(t, e.Plan)
	assert.NotZero(t, e.MoreSteps)
	assert.Nil(t, e.AtK, "no --k given")
	// Every step of a small task, 30 samples each: decided, on the
	// steps' own bounds, and the bound it prints reaches the target.
	rep = calibrateJSON(t, "--disks", "4", "--p", "0.99", "--samples", "30")
	e = rep.All
	assert.True(t, e.EveryStep)
	assert.Positive(t, e.KMin)
	require.NotNil(t, e.Plan)
	assert.GreaterOrEqual(t, e.Plan.PFullBound, rep.Target)
}

func TestCalibrateSaysWhenErrorsRepeat(t *testing.T) {
	t.Parallel()
	// The three calibrations are independent children: they run at once.
	calib := []string{"calibrate", "--disks", "20", "--p", "0.9", "--steps-sampled", "30", "--samples", "20"}
	repeat := [][]string{
		{"--wrong-answers", "1"},
		{"--concentration", "1"},
	}
	var repeating []*child
	for _, args := range repeat {
		repeating = append(repeating, start(t, nil, append(calib, args...)...))
	}
	spread := start(t, nil, calib...)
	for i, args := range repeat {
		c := repeating[i]
		code, out, errOut := c.wait(t, 5*time.Minute), c.stdout.String(), c.stderr.String()
		require.Contains(t, []int{0, 1}, code, errOut)
		assert.Contains(t, out, "wrong answers repeat: 100% of pairs of wrong answers to one step are the same answer", "%v", args)
		assert.Contains(t, out, "correlated errors; k_min assumes one rival, which is then exact for the wrong-winner rate", "%v", args)
	}
	code, out := spread.wait(t, 5*time.Minute), spread.stdout.String()
	require.Contains(t, []int{0, 1}, code)
	assert.Contains(t, out, "errors spread", "the default sim spreads its errors over 8 answers")
}

func TestCalibrateAtKWithPrices(t *testing.T) {
	t.Parallel()
	rep := calibrateJSON(t, "--disks", "12", "--p", "0.99", "--k", "3", "--price-in", "0.4", "--price-out", "1.6", "--target", "0.99", "--confidence", "0.9", "--steps-sampled", "20")
	e := rep.All
	require.NotNil(t, e.AtK)
	assert.Equal(t, 3, e.AtK.K)
	assert.Equal(t, 0.99, rep.Target)
	assert.Equal(t, 0.9, rep.Confidence)
	assert.InDelta(t, (e.InputTokens*0.4+e.OutputTokens*1.6)/1e6, e.CostPerSample, 1e-12)
	assert.InDelta(t, e.AtK.SamplesPerStep*e.CostPerSample*float64(rep.Total), e.AtK.Cost, 1e-9)
}

func TestCalibrateASpecTask(t *testing.T) {
	t.Parallel()
	rep := calibrateJSON(t, "--spec", "../../testdata/spec/find-version.json", "--samples", "10", "--p", "1", "--flag-rate", "0")
	assert.Equal(t, 3, rep.Total)
	assert.Equal(t, 30, rep.All.Correct, "the script's tool calls ran, so every step's prompt has what it needs")
	assert.Positive(t, rep.All.KMin, "every step sampled, 10 right of 10: decided on the steps' own bounds")
	// The spec is opened as maker run opens it: a policy that denies its
	// tools is refused before anything is sampled.
	code, out, errOut := cli(t, "calibrate", "--json", "--progress", "off", "--spec", "../../testdata/spec/find-version.json", "--samples", "10", "--p", "1", "--flag-rate", "0", "--tools", "none")
	assert.Equal(t, 2, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, `which the tool policy (none) always denies`)
}

// TestCalibrateUntilDecidedCapOfASmallSpec: the first round of a task
// with fewer steps than --steps-sampled samples all its steps, so
// --until-max-samples is checked against that round (3 steps times 10
// samples), not --steps-sampled times --samples (1000).
func TestCalibrateUntilDecidedCapOfASmallSpec(t *testing.T) {
	t.Parallel()
	args := []string{"calibrate", "--json", "--progress", "off", "--spec", "../../testdata/spec/find-version.json", "--samples", "10", "--p", "1", "--flag-rate", "0", "--until-decided"}
	code, out, errOut := cli(t, append(args, "--until-max-samples", "50")...)
	assert.Equal(t, 0, code, errOut)
	var rep calibrate.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Len(t, rep.Sampled, 3)
	code, out, errOut = cli(t, append(args, "--until-max-samples", "20")...)
	assert.Equal(t, 2, code, errOut)
	assert.Empty(t, out)
	assert.Equal(t, "maker: --until-max-samples 20: below the first round's 30 samples (the task's 3 steps times --samples): raise it\n", errOut)
}

// TestCalibrateSpecRootNotAFolderNamesRoot: a --root that is not a
// folder is --root's fault, said as maker run says it, with the fix.
func TestCalibrateSpecRootNotAFolderNamesRoot(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing")
	code, out, errOut := cli(t, "calibrate", "--progress", "off", "--spec", "../../testdata/spec/find-version.json", "--root", missing)
	assert.Equal(t, 2, code, errOut)
	assert.Empty(t, out)
	assert.True(t, strings.HasPrefix(errOut, "maker: --root "+missing+": not a folder; name an existing folder"), "the flag at fault first, as maker run says it: %s", errOut)
}

// TestCalibrateRolesRefusesStepLoopFlags: --roles reads its own flags
// and the model's; any other given, the step loop's or calibrate's, is
// refused naming it (exit 2), never taken and ignored.
func TestCalibrateRolesRefusesStepLoopFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--journal", filepath.Join(t.TempDir(), "j.jsonl")}, {"--escalate", "raise-k"}, {"--p-late", "0.8"}, {"--latency", "1ms"}, {"--disks", "3"}} {
		code, out, errOut := cli(t, append([]string{"calibrate", "--roles", "multiply", "--roles-size", "2", "--roles-problems", "1", "--roles-nodes", "1", "--samples", "2"}, args...)...)
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
		assert.Empty(t, out, args)
		assert.True(t, strings.HasPrefix(errOut, "maker: "+args[0]+" does not apply to --roles"), "%v: %s", args, errOut)
	}
}

func TestCalibrateUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--steps-sampled", "0"}, "--steps-sampled 0: use a positive value, or leave the flag out for 100"},
		{[]string{"--steps-sampled", "-1"}, "--steps-sampled -1: use 1 to 100000"},
		{[]string{"--samples", "-1"}, "--samples -1: use 1 to 10000"},
		{[]string{"--steps-sampled", "100000", "--samples", "1000"}, "at most 10000000 samples in all"},
		{[]string{"--target", "1"}, "--target 1: use a probability above 0 and below 1"},
		{[]string{"--confidence", "0"}, "--confidence 0: use a positive value"},
		{[]string{"--confidence", "1"}, "--confidence 1: use a probability above 0 and below 1"},
		{[]string{"--concurrency", "0"}, "--concurrency 0: use a positive value"},
		{[]string{"--concurrency", "4097"}, "--concurrency 4097: use 1 to 4096"},
		{[]string{"--disks", "0"}, "--disks 0: use 1 to 30"},
		{[]string{"--disks", "3", "--spec", "x.json"}, "--disks and --spec: give one task"},
		{[]string{"--spec", "no-such-file.json"}, "--spec: open no-such-file.json"},
		{[]string{"--tools", "none"}, "--root, --tools and --tool-declaration apply to --spec only"},
		{[]string{"--k", "auto"}, "--k auto does not apply to maker calibrate"},
		{[]string{"--journal", "j.jsonl"}, "--journal does not apply to maker calibrate"},
		{[]string{"--k-floor", "3"}, "--k-floor does not apply to maker calibrate"},
		{[]string{"--price-in", "-1"}, "--price-in -1: use dollars per million tokens"},
		{[]string{"--p", "1.5"}, "--p 1.5: use a probability"},
		{[]string{"--model", "openai:x", "--p", "0.9"}, "--p applies to --model sim only"},
	} {
		code, out, errOut := cli(t, append([]string{"calibrate"}, c.args...)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errOut)
		assert.Empty(t, out, "%v", c.args)
		assert.True(t, strings.HasPrefix(errOut, "maker: "), errOut)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
}

func TestHanoiKAuto(t *testing.T) {
	t.Parallel()
	code, s := hanoiJSON(t, "--disks", "8", "--k", "auto", "--p", "0.95", "--wrong-answers", "1", "--target", "0.95")
	require.Equal(t, 0, code, "%+v", s)
	assert.True(t, s.Solved)
	assert.Zero(t, s.K, "no fixed k")
	assert.Greater(t, len(s.KHistogram), 1, "k followed the votes: %v", s.KHistogram)
	assert.Equal(t, 1, s.KHistogram[30], "the first step runs at --k-max")
	require.NotNil(t, s.PEstimate)
	assert.InDelta(t, 0.95, s.PEstimate.P, 0.05)
	assert.Less(t, s.PEstimate.Lower, s.PEstimate.P)

	code, s = hanoiJSON(t, "--disks", "6", "--k", "auto", "--k-floor", "3", "--k-max", "5", "--p", "0.999")
	require.Equal(t, 0, code)
	for k := range s.KHistogram {
		assert.GreaterOrEqual(t, k, 3)
		assert.LessOrEqual(t, k, 5)
	}

	code, out, _ := cli(t, "hanoi", "--disks", "5", "--k", "auto", "--progress", "off")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "hanoi 5 disks, k=auto,")
	assert.Contains(t, out, "steps by k: ")
	assert.Contains(t, out, "k auto: p ")

	code, out, _ = cli(t, "run", "../../testdata/spec/find-version.json", "--k", "auto", "--progress", "off")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "k=auto")
}

func TestKAutoUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hanoi", "--k", "abc"}, `invalid argument "abc" for "--k" flag: want a margin from 1 to 1000, or auto`},
		{[]string{"hanoi", "--k", "0"}, `invalid argument "0" for "--k" flag: want a margin from 1 to 1000, or auto`},
		{[]string{"hanoi", "--k", "auto", "--k-floor", "1"}, "--k-floor 1: use at least 2"},
		{[]string{"hanoi", "--k", "auto", "--k-floor", "4", "--k-max", "3"}, "--k-max 3: use --k-floor (4) to 1000"},
		{[]string{"hanoi", "--k", "auto", "--target", "0"}, "--target 0: use a target success rate above 0 and below 1"},
		{[]string{"hanoi", "--target", "0.9"}, "--target applies to --k auto only"},
		{[]string{"hanoi", "--k-floor", "3"}, "--k-floor applies to --k auto only"},
		{[]string{"hanoi", "--k", "auto", "--parallel", "31"}, "--parallel 31: use 1 to --k (30)"},
		{[]string{"hanoi", "--k", "auto", "--max-samples", "20"}, "--max-samples 20 plus --k-max 30: --max-samples cannot hold a race at --k-max: raise it"},
		{[]string{"solve", "x.jsonl", "--k", "auto"}, "--k auto applies to maker hanoi and maker run"},
	} {
		code, out, errOut := cli(t, c.args...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errOut)
		assert.Empty(t, out, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
}
