package benchmarks

import (
	"fmt"
	"image/color"
	"strings"

	"github.com/mdap-go/mdap/vote/laws"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Charts renders the report's figures as SVG files, by file name, for the
// suites that ran (gonum/plot).
func (r *Report) Charts() (map[string][]byte, error) {
	ps, err := r.plots()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(ps))
	for name, p := range ps {
		if out[name], _, err = p.render("svg"); err != nil {
			return nil, fmt.Errorf("benchmarks: chart %s: %w", name, err)
		}
	}
	return out, nil
}

// plots are the report's charts, by file name.
func (r *Report) plots() (map[string]*chart, error) {
	type named struct {
		name string
		make func() (*chart, error)
	}
	var charts []named
	if f := r.Fidelity; f != nil {
		charts = append(charts,
			named{"fidelity_votes.svg", func() (*chart, error) { return fidelityVotesChart(f) }},
			named{"fidelity_wrong.svg", func() (*chart, error) { return fidelityWrongChart(f) }})
	}
	if s := r.Strategies; s != nil {
		charts = append(charts,
			named{"strategies.svg", func() (*chart, error) { return strategiesChart(s) }},
			named{"strategies_wall.svg", func() (*chart, error) { return wallChart(s) }})
	}
	if s := r.Scale; s != nil {
		charts = append(charts,
			named{"scale_time.svg", func() (*chart, error) { return scaleTimeChart(s) }},
			named{"scale_memory.svg", func() (*chart, error) { return scaleMemoryChart(s) }})
	}
	if c := r.Cost; c != nil {
		charts = append(charts, named{"cost.svg", func() (*chart, error) { return costChart(c) }})
	}
	if d := r.Decompose; d != nil {
		charts = append(charts, named{"decompose.svg", func() (*chart, error) { return decomposeChart(d) }})
	}
	out := make(map[string]*chart, len(charts))
	for _, c := range charts {
		p, err := c.make()
		if err != nil {
			return nil, fmt.Errorf("benchmarks: chart %s: %w", c.name, err)
		}
		out[c.name] = p
	}
	return out, nil
}

// errPoints are points with vertical error bars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

func line(p *plot.Plot, xys plotter.XYs, c color.Color, dashed bool, name string) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color = c
	l.Width = vg.Points(1.2)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

func points(p *plot.Plot, pts errPoints, c color.Color, shape draw.GlyphDrawer) error {
	s, err := plotter.NewScatter(pts.XYs)
	if err != nil {
		return err
	}
	s.GlyphStyle.Color = c
	s.GlyphStyle.Shape = shape
	s.GlyphStyle.Radius = vg.Points(3)
	p.Add(s)
	if pts.YErrors != nil {
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return err
		}
		eb.Color = c
		p.Add(eb)
	}
	return nil
}

// fidelityVotesChart: votes per step against k, one line per p and rival
// structure (theory), measured points with 95% bars (race path).
func fidelityVotesChart(f *FidelityResult) (*chart, error) {
	c := newChart()
	p := c.p
	p.Title.Text = fmt.Sprintf("Votes per step against k (%d steps a point)", f.RaceSteps)
	p.X.Label.Text = "k"
	p.Y.Label.Text = "valid votes per step"
	top := 0.0
	for _, cell := range f.Cells {
		top = max(top, cell.Votes.Hi, cell.Theory)
	}
	p.Y.Min, p.Y.Max = 0, top*1.05
	for i, pv := range fidelityPs {
		col := plotutil.Color(i)
		for _, rivals := range []int{1, spreadRivals} {
			// The theory at the cells' k (the law with eight rivals is a
			// dynamic program: computed once, in the cell).
			var th plotter.XYs
			for _, cell := range f.Cells {
				if cell.Path == "race" && cell.Rivals == rivals && cell.P == pv {
					th = append(th, plotter.XY{X: float64(cell.K), Y: cell.Theory})
				}
			}
			name := ""
			if rivals == 1 {
				name = fmt.Sprintf("p=%g", pv)
			}
			if err := line(p, th, col, rivals != 1, name); err != nil {
				return nil, err
			}
			var pts errPoints
			for _, cell := range f.Cells {
				if cell.Path == "race" && cell.Rivals == rivals && cell.P == pv {
					pts.XYs = append(pts.XYs, plotter.XY{X: float64(cell.K), Y: cell.Votes.Mean})
					h := (cell.Votes.Hi - cell.Votes.Lo) / 2
					pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{h, h})
				}
			}
			shape := draw.GlyphDrawer(draw.CircleGlyph{})
			if rivals != 1 {
				shape = draw.BoxGlyph{}
			}
			if err := points(p, pts, col, shape); err != nil {
				return nil, err
			}
		}
	}
	// The rival structures' styles, in black.
	for _, st := range []struct {
		name   string
		dashed bool
		shape  draw.GlyphDrawer
	}{{"one rival", false, draw.CircleGlyph{}}, {"eight rivals", true, draw.BoxGlyph{}}} {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}})
		if err != nil {
			return nil, err
		}
		l.Width = vg.Points(1.2)
		if st.dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		g, err := plotter.NewScatter(plotter.XYs{{X: 0, Y: 0}})
		if err != nil {
			return nil, err
		}
		g.GlyphStyle.Shape, g.GlyphStyle.Radius = st.shape, vg.Points(3)
		p.Legend.Add(st.name, l, g)
	}
	return c, nil
}

// fidelityWrongChart: the wrong-winner rate against k, log scale, theory
// lines (one rival) and measured rates (both paths, one rival; zero rates
// are not drawn on a log scale).
func fidelityWrongChart(f *FidelityResult) (*chart, error) {
	c := newChart()
	p := c.p
	// No Y label: on a log scale gonum pads the top for one as if the
	// label sat at the linear middle, leaving a dead band under the
	// title; the title says what the axis is.
	p.Title.Text = "Share of steps won by a wrong answer, one rival: 1 - PStep (lines), measured (points)"
	p.X.Label.Text = "k"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: 0}
	// Up to 1, a decade's tick: a tick beyond the range would push the
	// data area down (gonum pads for its label).
	p.Y.Max = 1
	for i, pv := range fidelityPs {
		c := plotutil.Color(i)
		var th plotter.XYs
		for k := 1; k <= fidelityKs[len(fidelityKs)-1]; k++ {
			th = append(th, plotter.XY{X: float64(k), Y: max(1e-12, 1-laws.PStep(pv, k))})
		}
		if err := line(p, th, c, false, fmt.Sprintf("p=%g", pv)); err != nil {
			return nil, err
		}
		var pts errPoints
		for _, cell := range f.Cells {
			if cell.Path == "race" && cell.Rivals == 1 && cell.P == pv && cell.Wrong.Hits > 0 {
				pts.XYs = append(pts.XYs, plotter.XY{X: float64(cell.K), Y: cell.Wrong.Rate})
			}
		}
		if len(pts.XYs) > 0 {
			if err := points(p, pts, c, draw.CircleGlyph{}); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// barGroups draws a group of bars per name, one bar per group in each,
// with the names on the X axis; the bars' width is set when the chart is
// laid out (chart.layout), from the room each name has.
func (c *chart) barGroups(names []string, groups []string, value func(group, name string) float64) error {
	p := c.p
	top := 0.0
	for gi, g := range groups {
		vals := make(plotter.Values, len(names))
		for i, n := range names {
			vals[i] = value(g, n)
			top = max(top, vals[i])
		}
		bars, err := plotter.NewBarChart(vals, vg.Points(1))
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(gi)
		bars.LineStyle.Width = 0
		p.Add(bars)
		p.Legend.Add(g, bars)
		c.bars = append(c.bars, bars)
	}
	p.NominalX(names...)
	c.names = len(names)
	// Each name's group is centred on its index: half a slot of room at
	// either end, so no bar is cut off.
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.Y.Min = 0
	p.Y.Max = top * 1.08
	p.X.Tick.Label.Rotation = 0.6
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	return nil
}

func strategyNames(s *StrategiesResult) []string {
	var names []string
	for _, st := range strategies() {
		if rowOf(s.Rows, s.Scenarios[0].Name, st.name) != nil {
			names = append(names, st.name)
		}
	}
	return names
}

func strategiesChart(s *StrategiesResult) (*chart, error) {
	c := newChart()
	p := c.p
	p.Title.Text = "Samples per step by strategy (same seeded steps)"
	p.Y.Label.Text = "samples per step"
	var groups []string
	for _, sc := range s.Scenarios {
		groups = append(groups, sc.Name)
	}
	err := c.barGroups(strategyNames(s), groups, func(g, n string) float64 {
		if r := rowOf(s.Rows, g, n); r != nil {
			return r.SamplesPerStep.Mean
		}
		return 0
	})
	return c, err
}

func wallChart(s *StrategiesResult) (*chart, error) {
	c := newChart()
	p := c.p
	p.Title.Text = "Wall time per step, in mean model-call latencies"
	p.Y.Label.Text = "wall time per step / mean latency"
	var groups []string
	seen := map[string]bool{}
	label := func(r WallRow) string {
		return r.Scenario + ", " + strings.Fields(r.Latency)[0] // "fixed", "lognormal"
	}
	for _, r := range s.Wall {
		g := label(r)
		if !seen[g] {
			seen[g] = true
			groups = append(groups, g)
		}
	}
	err := c.barGroups(strategyNames(s), groups, func(g, n string) float64 {
		for _, r := range s.Wall {
			if label(r) == g && r.Strategy == n && r.NotRun == "" {
				return r.PerStep.Mean
			}
		}
		return 0
	})
	return c, err
}

func scaleTimeChart(s *ScaleResult) (*chart, error) {
	c := newChart()
	p := c.p
	p.Title.Text = "Hanoi on the sim: time against disks"
	p.X.Label.Text = "disks"
	p.Y.Label.Text = "µs"
	p.Legend.Top, p.Legend.Left = true, true
	var wall, cpu, over plotter.XYs
	for _, r := range s.Rows {
		wall = append(wall, plotter.XY{X: float64(r.Disks), Y: r.WallPerStep})
		cpu = append(cpu, plotter.XY{X: float64(r.Disks), Y: r.CPUPerSample})
		if r.Split != nil {
			over = append(over, plotter.XY{X: float64(r.Disks), Y: r.Overhead})
		}
	}
	for i, l := range []struct {
		name string
		xys  plotter.XYs
	}{{"wall time per step", wall}, {"CPU per sample", cpu}, {"CPU per sample but the model's", over}} {
		if len(l.xys) == 0 {
			continue
		}
		if err := line(p, l.xys, plotutil.Color(i), false, l.name); err != nil {
			return nil, err
		}
		if err := points(p, errPoints{XYs: l.xys}, plotutil.Color(i), draw.CircleGlyph{}); err != nil {
			return nil, err
		}
	}
	p.Y.Min = 0
	p.Y.Max *= 1.08 // the top line off the frame
	return c, nil
}

func scaleMemoryChart(s *ScaleResult) (*chart, error) {
	c := newChart()
	p := c.p
	p.Title.Text = "Hanoi on the sim: peak memory against disks"
	p.X.Label.Text = "disks"
	p.Y.Label.Text = "MB"
	p.Legend.Top, p.Legend.Left = true, true
	var heap, total, rss plotter.XYs
	for _, r := range s.Rows {
		heap = append(heap, plotter.XY{X: float64(r.Disks), Y: r.PeakHeapMB})
		total = append(total, plotter.XY{X: float64(r.Disks), Y: r.PeakTotalMB})
		rss = append(rss, plotter.XY{X: float64(r.Disks), Y: r.PeakRSSMB})
	}
	for i, l := range []struct {
		name string
		xys  plotter.XYs
	}{{"peak live heap", heap}, {"peak Go runtime total", total}, {"peak RSS", rss}} {
		if err := line(p, l.xys, plotutil.Color(i), false, l.name); err != nil {
			return nil, err
		}
		if err := points(p, errPoints{XYs: l.xys}, plotutil.Color(i), draw.CircleGlyph{}); err != nil {
			return nil, err
		}
	}
	p.Y.Min = 0
	p.Y.Max *= 1.08 // the top line off the frame
	return c, nil
}
