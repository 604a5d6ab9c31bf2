package benchmarks

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"
)

// inside reports whether r lies within outer (to a hundredth of a point).
func inside(r, outer vg.Rectangle) bool {
	const eps = 0.01
	return r.Min.X >= outer.Min.X-eps && r.Max.X <= outer.Max.X+eps && r.Min.Y >= outer.Min.Y-eps && r.Max.Y <= outer.Max.Y+eps
}

// overlap reports whether a and b share an area.
func overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// checkReadable asserts that a laid-out chart can be read at its size:
// a data area of at least half its height, right under the title, with
// a Y label no longer than it; the legend beside the data area, never over it; the title, the legend
// and every X label within the canvas; neighbouring X labels apart; every
// bar within the data area, a name's bars side by side and apart from the
// next name's.
func checkReadable(t *testing.T, name string, g geometry) {
	t.Helper()
	assert.True(t, inside(g.data, g.canvas), "%s: the data area within the canvas", name)
	assert.GreaterOrEqual(t, g.data.Size().Y, g.canvas.Size().Y/2, "%s: the data area at least half the chart's height", name)
	assert.LessOrEqual(t, g.yLabel, g.data.Size().Y, "%s: the Y label no longer than the data area is high (a longer one shrinks it)", name)
	assert.LessOrEqual(t, g.title.Min.Y-g.data.Max.Y, vg.Length(24), "%s: no dead band between the title and the data area (data up to %.0f pt, title from %.0f pt)", name, g.data.Max.Y, g.title.Min.Y)
	assert.True(t, inside(g.title, g.canvas), "%s: the title within the canvas: %v in %v", name, g.title, g.canvas)
	if g.legend != (vg.Rectangle{}) {
		assert.False(t, overlap(g.legend, g.data), "%s: the legend %v over the data area %v", name, g.legend, g.data)
		assert.True(t, inside(g.legend, g.canvas), "%s: the legend %v within the canvas %v", name, g.legend, g.canvas)
		assert.False(t, overlap(g.legend, g.title), "%s: the legend over the title", name)
	}
	for i, l := range g.xLabels {
		assert.True(t, inside(l, g.canvas), "%s: X label %d %v within the canvas %v", name, i, l, g.canvas)
		if g.legend != (vg.Rectangle{}) {
			assert.False(t, overlap(l, g.legend), "%s: X label %d under the legend", name, i)
		}
	}
	if len(g.xLabels) > 1 {
		assert.GreaterOrEqual(t, g.xLabelGap, g.xLabelHeight, "%s: neighbouring X labels %.1f pt apart, less than a label's height %.1f pt", name, g.xLabelGap, g.xLabelHeight)
	}
	const eps = 0.01
	for i, bars := range g.bars {
		for j, b := range bars {
			assert.True(t, b[0] >= g.data.Min.X-eps && b[1] <= g.data.Max.X+eps, "%s: bar %d of name %d %v within the data area %v", name, i, j, b, g.data)
			if i+1 < len(g.bars) {
				assert.LessOrEqual(t, b[1], g.bars[i+1][j][0]+eps, "%s: name %d: bars %d and %d overlap", name, j, i, i+1)
			}
			if j+1 < len(bars) {
				last := g.bars[len(g.bars)-1][j][1]
				assert.Less(t, last, g.bars[0][j+1][0], "%s: the bars of names %d and %d overlap", name, j, j+1)
			}
		}
	}
}

// inkOnEdge returns the points of the outer ring of width px of img that
// are not blank (white or transparent): where a label or a legend is cut
// off, as the image shows it.
func inkOnEdge(img image.Image, px int) []image.Point {
	var out []image.Point
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if x >= b.Min.X+px && x < b.Max.X-px && y >= b.Min.Y+px && y < b.Max.Y-px {
				continue
			}
			r, g, bl, a := img.At(x, y).RGBA()
			if a != 0 && (r < 0xf000 || g < 0xf000 || bl < 0xf000) {
				out = append(out, image.Point{X: x, Y: y})
			}
		}
	}
	return out
}

// TestChartsReadable renders every chart of the committed report (and a
// batch's spend) to PNG and checks its layout (checkReadable). With
// MDAP_CHART_PNG=DIR it keeps the PNGs there, to look at.
func TestChartsReadable(t *testing.T) {
	t.Parallel()
	rep, err := ReadReport("results")
	require.NoError(t, err)
	charts, err := rep.plots()
	require.NoError(t, err)
	require.Len(t, charts, 7, "every chart of a full report")
	// A batch's spend: a stop at the cap, and a run without one.
	var spend []SpendPoint
	for i := range 40 {
		spend = append(spend, SpendPoint{Seconds: float64(i) * 0.7, Dollars: 0.031 + 0.0021*float64(i)})
	}
	charts["spend.svg"], err = spendChart(spend, 0.12, "maker solve tasks.jsonl: the batch's spend")
	require.NoError(t, err)
	charts["spend_nocap.svg"], err = spendChart(spend[:1], 0, "one point")
	require.NoError(t, err)
	_, err = spendChart(nil, 0, "")
	require.ErrorIs(t, err, ErrNoSpend)
	names := make([]string, 0, len(charts))
	for name := range charts {
		names = append(names, name)
	}
	sort.Strings(names)
	keep := os.Getenv("MDAP_CHART_PNG")
	for _, name := range names {
		b, g, err := charts[name].render("png")
		require.NoError(t, err, name)
		img, err := png.Decode(bytes.NewReader(b))
		require.NoError(t, err, name)
		assert.Equal(t, 672, img.Bounds().Dx(), "%s: 7 in at 96 dpi", name)
		assert.Empty(t, inkOnEdge(img, 4), "%s: nothing drawn on the image's outer 4 pixels: something is cut off there", name)
		checkReadable(t, name, g)
		if keep != "" {
			require.NoError(t, os.WriteFile(filepath.Join(keep, name+".png"), b, 0o644))
		}
	}
}
