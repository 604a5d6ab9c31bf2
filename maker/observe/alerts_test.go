package observe_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAlertRules runs promtool's unit tests of the alert rules
// (docs/observe-alerts_test.yml: each alert, when it fires and when it
// must not, a hung run and a lingering finished one among them). Skipped
// without promtool; .ci/observe.sh installs it and runs them always.
func TestAlertRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian: apt-get install prometheus); .ci/observe.sh runs these tests")
	}
	cmd := exec.Command(promtool, "test", "rules", "observe-alerts_test.yml")
	cmd.Dir = "../../docs"
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}
