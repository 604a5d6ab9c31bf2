package view

import (
	"bufio"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
)

// Colours of the step map, one per cell byte (Palette). The page draws
// the map with the same palette, sent in its state.
var (
	colourUndecided = color.RGBA{0x22, 0x27, 0x2e, 0xff} // not decided yet
	colourEscalated = color.RGBA{0xe0, 0x24, 0x5e, 0xff}
	colourContested = color.RGBA{0xf5, 0x9e, 0x0b, 0xff}
	colourFlagged   = color.RGBA{0xb3, 0x6b, 0xf7, 0xff}
	// A step that took k samples (the fewest a step can) is pale green;
	// more samples go through teal to deep blue at k+16 and beyond.
	colourFewest = color.RGBA{0xb7, 0xf0, 0xc0, 0xff}
	colourMost   = color.RGBA{0x1d, 0x3f, 0xa8, 0xff}
)

// Palette returns the map's colour of every cell byte for a run of
// margin k (0, adaptive, is taken as 3): escalated, then contested, then
// red-flagged steps in their colours, others by their samples, from pale
// green at k or fewer to deep blue at k+16 or more.
func Palette(k int) color.Palette {
	if k <= 0 {
		k = 3
	}
	p := make(color.Palette, 256)
	for i := range p {
		c := byte(i)
		switch {
		case c == 0:
			p[i] = colourUndecided
		case c&CellEscalated != 0:
			p[i] = colourEscalated
		case c&CellContested != 0:
			p[i] = colourContested
		case c&CellFlagged != 0:
			p[i] = colourFlagged
		default:
			n := int(c & CellSamples)
			t := float64(min(max(n-k, 0), 16)) / 16
			p[i] = mix(colourFewest, colourMost, t)
		}
	}
	return p
}

func mix(a, b color.RGBA, t float64) color.RGBA {
	f := func(x, y uint8) uint8 { return uint8(float64(x) + (float64(y)-float64(x))*t + 0.5) }
	return color.RGBA{f(a.R, b.R), f(a.G, b.G), f(a.B, b.B), 0xff}
}

// Image returns the step map of the run: one pixel per step (step i at
// (i mod width, i / width), see Layout), the cells not decided yet
// dark. It shares nothing with the Run.
func (r *Run) Image() *image.Paletted {
	st := r.Stats()
	img := image.NewPaletted(image.Rect(0, 0, st.Width, st.Height), Palette(st.K))
	r.mu.Lock()
	copy(img.Pix, r.cells)
	r.mu.Unlock()
	return img
}

// WritePNG writes the step map as a PNG (see Image): a paletted image,
// about a megabyte of memory for a million steps.
func (r *Run) WritePNG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(bw, r.Image()); err != nil {
		return fmt.Errorf("encoding the step map: %w", err)
	}
	return bw.Flush()
}

// paletteHex is the palette as CSS colours, for the page.
func paletteHex(k int) []string {
	p := Palette(k)
	out := make([]string, len(p))
	for i, c := range p {
		r, g, b, _ := c.RGBA()
		out[i] = fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
	}
	return out
}
