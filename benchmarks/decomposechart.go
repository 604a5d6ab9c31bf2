package benchmarks

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// decomposeChart: accuracy against dollars per problem, one point per
// cell; colour is the problem, filled circles mdap's ahead-by-k, open
// triangles the first-to-K baseline; a thin line joins the two strategies
// of one cell (same problems, same p).
func decomposeChart(d *DecomposeResult) (*chart, error) {
	c := newChart()
	p := c.p
	p.Title.Text = fmt.Sprintf("Voted decomposition: accuracy against cost (T %v)", d.Target)
	p.X.Label.Text = "dollars per problem (log scale)"
	p.Y.Label.Text = "share of problems answered right"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	lo, hi := 1.0, 0.0
	for _, r := range d.Rows {
		lo = math.Min(lo, r.Accuracy)
		hi = math.Max(hi, r.Dollars)
	}
	p.Y.Min, p.Y.Max = math.Max(0, lo-0.1), 1.02
	var problems []string
	for _, r := range d.Rows {
		if len(problems) == 0 || problems[len(problems)-1] != r.Problem {
			problems = append(problems, r.Problem)
		}
	}
	for i, name := range problems {
		col := plotutil.Color(i)
		var ahead, ftk errPoints
		for _, r := range d.Rows {
			if r.Problem != name || r.Dollars <= 0 {
				continue
			}
			xy := plotter.XY{X: r.Dollars, Y: r.Accuracy}
			if r.Strategy == "first-to-k" {
				ftk.XYs = append(ftk.XYs, xy)
			} else {
				ahead.XYs = append(ahead.XYs, xy)
			}
		}
		for j := range min(len(ahead.XYs), len(ftk.XYs)) {
			if err := line(p, plotter.XYs{ahead.XYs[j], ftk.XYs[j]}, col, true, ""); err != nil {
				return nil, err
			}
		}
		if err := points(p, ahead, col, draw.CircleGlyph{}); err != nil {
			return nil, err
		}
		if err := points(p, ftk, col, draw.TriangleGlyph{}); err != nil {
			return nil, err
		}
		s, err := plotter.NewScatter(plotter.XYs{{X: hi, Y: 1}})
		if err != nil {
			return nil, err
		}
		s.GlyphStyle.Color, s.GlyphStyle.Shape, s.GlyphStyle.Radius = col, draw.BoxGlyph{}, vg.Points(3)
		p.Legend.Add(name, s)
	}
	p.Legend.Add("● ahead-by-k (mdap)")
	p.Legend.Add("▲ first-to-K (authors)")
	return c, nil
}
