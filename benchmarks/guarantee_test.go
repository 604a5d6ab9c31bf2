package benchmarks

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGuaranteeSuite: the guarantee suite over 20 seeds has its eight rows, and
// the figures they exist to show: under drift k auto keeps more runs right
// than the fixed k of the early p, and escalation keeps more runs right
// than k = 3 alone on hard steps that agree (the same seeds).
func TestGuaranteeSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("whole runs over 20 seeds per row: about 10 s of CPU")
	}
	g, err := runGuaranteeN(context.Background(), Options{Quick: true}, func() {}, 20)
	require.NoError(t, err)
	require.Len(t, g.Rows, 8)
	by := map[string]GuaranteeRow{}
	for _, r := range g.Rows {
		by[r.Scenario[:strings.Index(r.Scenario, ":")]+"/"+r.Policy] = r
		assert.Equal(t, 20, r.Success.N)
	}
	assert.Greater(t, by["drift/k auto"].Success.Hits, by["drift/k=3"].Success.Hits)
	assert.Greater(t, by["escalation/k=3, contested steps to a p 0.999 model"].Success.Hits, by["escalation/k=3"].Success.Hits)
	assert.Positive(t, by["escalation/k=3, contested steps to a p 0.999 model"].Escalated)
	var b strings.Builder
	writeGuarantee(&b, g)
	assert.Contains(t, b.String(), "| drift: p 0.99 then 0.9 from step 512 | k auto | 10 | 20/20")
}
