package benchmarks

import (
	"bytes"
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The size every chart is drawn at, and the room kept around its parts.
const (
	chartWidth  = 7 * vg.Inch
	chartHeight = 4.5 * vg.Inch
	chartGap    = 8 // points between the plot and its legend
	chartMargin = 6 // points of blank around the chart
	chartFont   = 10
)

// chart is a plot and what laying it out needs: its bar charts (if any),
// whose width depends on the room each name gets.
type chart struct {
	p     *plot.Plot
	bars  []*plotter.BarChart
	names int // the names on the X axis of a bar chart
}

// newChart returns a chart with a plot in the charts' style.
func newChart() *chart {
	p := plot.New()
	p.X.Tick.Label.Font.Size = chartFont
	p.Y.Tick.Label.Font.Size = chartFont
	p.X.Label.TextStyle.Font.Size = chartFont + 1
	p.Y.Label.TextStyle.Font.Size = chartFont + 1
	p.Legend.TextStyle.Font.Size = chartFont
	p.Legend.Padding = vg.Points(3)
	p.Title.TextStyle.Font.Size = chartFont + 2
	p.Title.Padding = vg.Points(6)
	return &chart{p: p}
}

// geometry is where a laid-out chart's parts land on its canvas, for the
// checks that it is readable (TestChartsReadable).
type geometry struct {
	canvas, data, legend vg.Rectangle // legend: empty without one
	title                vg.Rectangle
	// xLabels are the X axis's tick labels' boxes, as drawn (rotated
	// labels: the box of the rotated text); xLabelGap is the least
	// distance between two neighbouring rotated labels, across their
	// baselines, and xLabelHeight a label's height.
	xLabels                 []vg.Rectangle
	xLabelGap, xLabelHeight vg.Length
	// bars are the bars' horizontal extents, per bar chart and name.
	bars [][][2]vg.Length
	// yLabel is the length of the Y axis's label, drawn along the axis.
	yLabel vg.Length
}

// layout draws c on the canvas dc, within a blank margin: the plot on the left, its legend in a
// column on the right, outside the data area and beside its top; a plot
// whose first rotated X label would stick out on the left is moved right.
// Bar widths are set so that each name's group fills 80% of its slot. It
// returns where everything landed.
func (c *chart) layout(dc draw.Canvas) geometry {
	p := c.p
	g := geometry{canvas: dc.Rectangle}
	dc = draw.Crop(dc, chartMargin, -chartMargin, chartMargin, -chartMargin)
	leg := p.Legend
	p.Legend = plot.NewLegend() // drawn apart, beside the plot
	defer func() { p.Legend = leg }()

	legW, legH := legendSize(&leg)
	if legW > 0 {
		legW += 4 // a glyph drawn a little wider than measured
	}
	pc := dc
	if legW > 0 {
		pc = draw.Crop(dc, 0, -(legW + chartGap), 0, 0)
	}
	// Room on the left for the first rotated label, found in two passes.
	for range 2 {
		c.sizeBars(p.DataCanvas(pc))
		g.xLabels, g.xLabelGap, g.xLabelHeight = c.xLabelBoxes(pc)
		if len(g.xLabels) == 0 {
			break
		}
		if over := dc.Min.X - g.xLabels[0].Min.X; over > 0 {
			pc.Min.X += over + 2
			continue
		}
		break
	}
	p.Draw(pc)
	data := p.DataCanvas(pc)
	g.data = data.Rectangle
	g.bars = c.barExtents(data)
	g.yLabel = p.Y.Label.TextStyle.Width(p.Y.Label.Text)
	tr := p.Title.TextStyle.Rectangle(p.Title.Text)
	g.title = vg.Rectangle{Min: vg.Point{X: pc.Center().X - tr.Size().X/2, Y: pc.Max.Y - tr.Size().Y},
		Max: vg.Point{X: pc.Center().X + tr.Size().X/2, Y: pc.Max.Y}}
	if legW > 0 {
		lc := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: dc.Max.X - legW, Y: data.Max.Y - legH},
			Max: vg.Point{X: dc.Max.X, Y: data.Max.Y},
		}}
		leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
		leg.Draw(lc)
		g.legend = lc.Rectangle
	}
	return g
}

// legendSize is the room the legend's entries take, drawn top-down.
func legendSize(l *plot.Legend) (w, h vg.Length) {
	l2 := *l
	l2.Left = false // Legend.Rectangle measures widths alike either way
	r := l2.Rectangle(draw.Canvas{})
	return r.Size().X, r.Size().Y
}

// sizeBars sets the bar charts' widths and offsets for the data canvas
// dc: each name's group of bars fills 80% of its slot.
func (c *chart) sizeBars(dc draw.Canvas) {
	if len(c.bars) == 0 || c.names == 0 {
		return
	}
	slot := dc.Size().X / vg.Length(c.names)
	w := slot * 0.8 / vg.Length(len(c.bars))
	for i, b := range c.bars {
		b.Width = w
		b.Offset = vg.Length(float64(i)-float64(len(c.bars)-1)/2) * w
	}
}

// barExtents returns each bar's horizontal extent on the data canvas.
func (c *chart) barExtents(dc draw.Canvas) [][][2]vg.Length {
	if len(c.bars) == 0 {
		return nil
	}
	x, _ := c.p.Transforms(&dc)
	out := make([][][2]vg.Length, len(c.bars))
	for i, b := range c.bars {
		for j := range b.Values {
			mid := x(float64(j)) + b.Offset
			out[i] = append(out[i], [2]vg.Length{mid - b.Width/2, mid + b.Width/2})
		}
	}
	return out
}

// xLabelBoxes returns the boxes the X axis's tick labels are drawn in on
// the plot canvas pc (where gonum's horizontal axis puts them), the least
// distance between two neighbouring labels across their baselines (for
// labels turned alike; for level labels, the space between them plus a
// label's height), and a label's height.
func (c *chart) xLabelBoxes(pc draw.Canvas) ([]vg.Rectangle, vg.Length, vg.Length) {
	p := c.p
	data := p.DataCanvas(pc)
	x, _ := p.Transforms(&data)
	sty := p.X.Tick.Label
	marks := p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max)
	y := pc.Min.Y
	if p.X.Label.Text != "" {
		y += p.X.Label.TextStyle.Height(p.X.Label.Text) + p.X.Label.Padding
	}
	var tallest vg.Length
	for _, t := range marks {
		if !t.IsMinor() {
			tallest = max(tallest, sty.Rectangle(t.Label).Size().Y)
		}
	}
	y += tallest + sty.FontExtents().Descent
	h := sty.FontExtents().Height
	var boxes []vg.Rectangle
	var xs []vg.Length
	for _, t := range marks {
		if t.IsMinor() || t.Label == "" || t.Value < p.X.Min || t.Value > p.X.Max {
			continue
		}
		tx := x(t.Value)
		r := sty.Rectangle(t.Label)
		r.Min.X, r.Max.X = r.Min.X+tx, r.Max.X+tx
		r.Min.Y, r.Max.Y = r.Min.Y+y, r.Max.Y+y
		boxes = append(boxes, r)
		xs = append(xs, tx)
	}
	gap := vg.Length(math.Inf(1))
	for i := 1; i < len(xs); i++ {
		d := (xs[i] - xs[i-1]) * vg.Length(math.Abs(math.Sin(sty.Rotation)))
		if sty.Rotation == 0 {
			d = boxes[i].Min.X - boxes[i-1].Max.X + h
		}
		gap = min(gap, d)
	}
	return boxes, gap, h
}

// render draws c in format ("svg" or "png") at the charts' size.
func (c *chart) render(format string) ([]byte, geometry, error) {
	var buf bytes.Buffer
	switch format {
	case "svg":
		s := vgsvg.New(chartWidth, chartHeight)
		g := c.layout(draw.New(s))
		_, err := s.WriteTo(&buf)
		return buf.Bytes(), g, err
	case "png":
		img := vgimg.New(chartWidth, chartHeight)
		g := c.layout(draw.New(img))
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(&buf)
		return buf.Bytes(), g, err
	}
	return nil, geometry{}, fmt.Errorf("no chart format %q", format)
}
