package gcpolicy

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// TestPercent: the goal is about the floor while the live heap is small,
// GOGC 100 once twice the live heap passes the floor, and never a GOGC
// whose smallest goal passes the floor.
func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		floor, live, scan uint64
		want              int
	}{
		{32 * mib, 4 * mib, 4 * mib, 700},   // goal 4 + 4×7 = 32 MiB
		{32 * mib, 4 * mib, 5 * mib, 560},   // roots count: 4 + 5×5.6 = 32
		{32 * mib, 8 * mib, 8 * mib, 300},   // 8 + 8×3 = 32
		{32 * mib, 16 * mib, 16 * mib, 100}, // 2 × live = floor: Go's default
		{32 * mib, 20 * mib, 20 * mib, 100}, // above: Go's default
		{32 * mib, 32 * mib, 32 * mib, 100},
		{32 * mib, 40 * mib, 40 * mib, 100}, // live over the floor: no wrap-around
		{32 * mib, 1 * mib, 1 * mib, 800},   // capped: 4 MiB × 8 = the floor
		{32 * mib, 0, 0, 800},               // nothing measured yet: the cap
		{64 * mib, 0, 0, 1600},
		{2 * mib, 0, 0, 100}, // a floor under the runtime's minimum: Go's default
		{2 * mib, 1 * mib, 1 * mib, 100},
	} {
		if got := Percent(c.floor, c.live, c.scan); got != c.want {
			t.Errorf("Percent(%d MiB, %d MiB, %d MiB) = %d, want %d", c.floor/mib, c.live/mib, c.scan/mib, got, c.want)
		}
	}
}

// TestApplyRespectsTheEnvironment: GOGC or GOMEMLIMIT set, or a zero
// floor, installs nothing.
func TestApplyRespectsTheEnvironment(t *testing.T) {
	if Floor() != 0 {
		t.Fatal("a policy is installed before any Apply")
	}
	for _, env := range []map[string]string{{"GOGC": "100"}, {"GOGC": "off"}, {"GOMEMLIMIT": "1GiB"}} {
		if Apply(func(k string) string { return env[k] }, DefaultFloor) {
			t.Errorf("Apply with %v installed the policy", env)
		}
	}
	if Apply(func(string) string { return "" }, 0) {
		t.Error("Apply with a zero floor installed the policy")
	}
	if Floor() != 0 || Describe() != "" {
		t.Errorf("Floor %d, Describe %q after refused Applys", Floor(), Describe())
	}
}

// TestApplyTunesAfterEveryCollection runs in a child process (the policy
// lasts for the process): installed, GOGC follows the live heap after
// each collection, up while it is small, back to 100 while it is large,
// and a second Apply changes nothing.
func TestApplyTunesAfterEveryCollection(t *testing.T) {
	if os.Getenv("GCPOLICY_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestApplyTunesAfterEveryCollection$", "-test.v")
		cmd.Env = append(os.Environ(), "GCPOLICY_CHILD=1")
		for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
			cmd.Env = append(cmd.Env, k+"=") // empty: unset for Apply
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	const floorBytes = 64 << 20
	if !Apply(func(string) string { return "" }, floorBytes) {
		t.Fatal("Apply did not install the policy")
	}
	if Floor() != floorBytes {
		t.Fatalf("Floor() = %d, want %d", Floor(), floorBytes)
	}
	if Describe() == "" {
		t.Fatal("Describe() is empty with the policy installed")
	}
	if Apply(func(string) string { return "" }, DefaultFloor) || Floor() != floorBytes {
		t.Fatal("a second Apply changed the policy")
	}
	// waitFor collects until the finalizer has tuned GOGC as ok wants.
	waitFor := func(what string, ok func(int) bool) {
		t.Helper()
		for range 200 {
			runtime.GC()
			runtime.Gosched()
			if ok(gogc()) {
				return
			}
		}
		t.Fatalf("GOGC %d: never %s", gogc(), what)
	}
	waitFor("above 100 with a small live heap", func(p int) bool { return p > 100 && p <= 1600 })
	big := make([][]byte, 64) // 64 MiB live: twice over the floor
	for i := range big {
		big[i] = make([]byte, 1<<20)
	}
	waitFor("100 with a live heap over the floor", func(p int) bool { return p == 100 })
	runtime.KeepAlive(big)
	big = nil
	waitFor("above 100 again once the heap is small", func(p int) bool { return p > 100 })
	debug.SetGCPercent(100)
}
