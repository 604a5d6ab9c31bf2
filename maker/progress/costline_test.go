package progress

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCostLineForecastsTheWholeRun covers docs/cost.md:159-160: "The
// progress bar shows the dollars spent and the forecast for the whole run
// (spent / decided steps x total steps)". Before a step is decided there
// is nothing to forecast from, so only the dollars spent are shown.
func TestCostLineForecastsTheWholeRun(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "$0.0032 of ~$0.0112", CostLine(0.0032, 2, 7))
	assert.Equal(t, "$1.5000 of ~$3000.0000", CostLine(1.5, 1, 2000))
	assert.Equal(t, "$2.0000 of ~$2.0000", CostLine(2, 40, 40), "the last step: the forecast is what was spent")
	assert.Equal(t, "$0.2500", CostLine(0.25, 0, 7), "no step decided yet")
	assert.Equal(t, "$0.2500", CostLine(0.25, 3, 0), "no known total")
}
