package observe_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/adaptive"
	"github.com/mdap-go/mdap/maker/observe"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsNameServedMetrics: every metric the dashboard, the alert rules
// and docs/observe.md name is one a watched process serves on /metrics.
func TestDocsNameServedMetrics(t *testing.T) {
	tel, err := observe.Setup(context.Background(), observe.Config{Metrics: true, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	defer tel.Shutdown(context.Background())
	s := &maker.Solver{Observer: tel.SolverObserver(), Model: model{}, Executor: executorWithDeploy(t), Config: maker.Config{Vote: vote.Config{K: 2, Parallel: 1, MaxErrors: 5},
		AdaptiveK: &adaptive.Policy{Target: 0.9, Steps: 4, Floor: 2, Max: 3},
		// Four steps cannot bound p within the budget at k 3: adaptive k
		// stops by default; raise-k runs on, so every metric is served.
		Escalation: &maker.Escalation{Policy: maker.EscalateRaiseK}}}
	_, err = s.Solve(observe.WithOracle(context.Background(), &oracle{n: 1}), &counter{target: 4})
	require.NoError(t, err)
	// A second run whose step 0 is contested and escalated.
	esc := &maker.Solver{
		Observer: tel.SolverObserver(),
		Config:   maker.Config{Vote: vote.Config{K: 2, Parallel: 1, MaxErrors: 5}, Escalation: &maker.Escalation{Policy: maker.EscalateRaiseK, After: 2}},
		Model:    model{},
		Executor: executorWithDeploy(t),
	}
	_, err = esc.Solve(context.Background(), &counter{target: 4})
	require.NoError(t, err)
	w := tel.Observer()
	w.RecordBatch(context.Background(), 1, 1, 1, 1)
	w.RecordCostCap(context.Background(), 5)
	require.NoError(t, w.ObserveWorker(func() (int64, int64) { return 2, 1 }))
	require.NoError(t, w.ObserveQueue(func(context.Context) (int64, bool) { return 3, true }))
	require.NoError(t, w.ObserveEngine(func(context.Context) (observe.EngineFigures, bool) {
		return observe.EngineFigures{Streams: map[string]observe.StreamFigures{"MDAP_JOBS": {Messages: 1}}, Connections: 2, Workers: 1, Served: 3}, true
	}))
	require.NoError(t, w.ObserveCounter(observe.MetricSimRequests, "{request}", "requests", "outcome", func() map[string]int64 { return map[string]int64{"reply": 1} }))

	srv, err := observe.Serve("127.0.0.1:0", observe.Handler(tel.Registry))
	require.NoError(t, err)
	defer srv.Close()
	resp, err := http.Get("http://" + srv.Addr() + "/metrics")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	served := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(\w+)(?:\{| )`).FindAllStringSubmatch(string(page), -1) {
		served[m[1]] = true
	}
	name := regexp.MustCompile(`\b(?:mdap|gen_ai_client)_[a-z_]+`)
	for _, doc := range []string{"../../docs/observe-dashboard.json", "../../docs/observe-alerts.yml", "../../docs/observe.md"} {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		names := name.FindAllString(string(b), -1)
		require.NotEmpty(t, names, doc)
		for _, n := range names {
			assert.True(t, served[n], "%s names %s, which no process serves", doc, n)
		}
	}
}

// TestDashboardPanelsPlotWhatTheySay: a panel whose title names a kind of
// step (split, contested, escalated, wrong) plots that kind's metric; the
// "Contested" panel once plotted split steps alone.
func TestDashboardPanelsPlotWhatTheySay(t *testing.T) {
	b, err := os.ReadFile("../../docs/observe-dashboard.json")
	require.NoError(t, err)
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(b, &d))
	seen := 0
	for _, p := range d.Panels {
		for _, kind := range []string{"split", "contested", "escalated", "wrong"} {
			if !strings.Contains(strings.ToLower(p.Title), kind) {
				continue
			}
			seen++
			plotted := false
			for _, tg := range p.Targets {
				plotted = plotted || strings.Contains(tg.Expr, "mdap_steps_"+kind+"_total")
			}
			assert.True(t, plotted, "panel %q names %s steps but plots no mdap_steps_%s_total", p.Title, kind, kind)
		}
	}
	assert.NotZero(t, seen)
}
