package benchmarks

import (
	"errors"
	"fmt"
	"image/color"

	"github.com/mdap-go/mdap/internal/atomicfile"
	"github.com/mdap-go/mdap/maker/batch"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg/draw"
)

// SpendPoint is what a batch had spent at a moment of a run, as
// batch.SpendTrace records it.
type SpendPoint = batch.SpendPoint

// ErrNoSpend: SpendChart was given no point.
var ErrNoSpend = errors.New("no spend to chart")

// SpendChart draws a batch's spend over a run as an SVG chart of the
// charts' size (see TestChartsReadable): dollars spent in all against
// seconds, with the cap as a dashed line when capUSD > 0. Errors:
// ErrNoSpend; gonum's. Cost: one render.
func SpendChart(spend []SpendPoint, capUSD float64, title string) ([]byte, error) {
	c, err := spendChart(spend, capUSD, title)
	if err != nil {
		return nil, err
	}
	b, _, err := c.render("svg")
	return b, err
}

// WriteSpendChart writes SpendChart's SVG of spend to path, whole or not
// at all (a temporary file renamed over it), readable by its owner only
// (0600, as a results file: the chart shows what a batch spent). Errors:
// SpendChart's, the file system's. Cost: one render and one write.
func WriteSpendChart(path string, spend []SpendPoint, capUSD float64, title string) error {
	svg, err := SpendChart(spend, capUSD, title)
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, 0o600, svg)
}

func spendChart(spend []SpendPoint, capUSD float64, title string) (*chart, error) {
	if len(spend) == 0 {
		return nil, ErrNoSpend
	}
	c := newChart()
	p := c.p
	p.Title.Text = title
	p.X.Label.Text = "seconds into the run"
	p.Y.Label.Text = "dollars spent in all"
	xys := make(plotter.XYs, len(spend))
	top, end := 0.0, 0.0
	for i, pt := range spend {
		xys[i] = plotter.XY{X: pt.Seconds, Y: pt.Dollars}
		top, end = max(top, pt.Dollars), max(end, pt.Seconds)
	}
	if err := line(p, xys, plotutil.Color(0), false, "spent"); err != nil {
		return nil, err
	}
	// The last point marked: where the run ended (the only mark of a
	// run of one point).
	if err := points(p, errPoints{XYs: xys[len(xys)-1:]}, plotutil.Color(0), draw.CircleGlyph{}); err != nil {
		return nil, err
	}
	if capUSD > 0 {
		cl := plotter.XYs{{X: 0, Y: capUSD}, {X: max(end, 1e-3), Y: capUSD}}
		if err := line(p, cl, color.Gray{Y: 80}, true, fmt.Sprintf("--max-cost $%.4g", capUSD)); err != nil {
			return nil, err
		}
		top = max(top, capUSD)
	}
	p.X.Min, p.Y.Min = 0, 0
	p.Y.Max = max(top*1.08, 1e-6)
	p.X.Max = max(end, 1e-3)
	p.Y.Tick.Marker = dollarTicks{}
	return c, nil
}

// dollarTicks are the default ticks labelled in dollars.
type dollarTicks struct{}

// Ticks implements plot.Ticker.
func (dollarTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = fmt.Sprintf("$%.4g", ts[i].Value)
		}
	}
	return ts
}
