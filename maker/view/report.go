package view

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"sort"
	"time"
)

// reportPage is the self-contained report: no script, its style inline,
// the map a data: URL.
var reportPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":  func(n int) string { return groupDigits(n) },
	"pct":  func(x float64) string { return fmt.Sprintf("%.3f%%", 100*x) },
	"f3":   func(x float64) string { return fmt.Sprintf("%.3f", x) },
	"usd":  func(x float64) string { return fmt.Sprintf("$%.4f", x) },
	"sci":  func(x float64) string { return fmt.Sprintf("%.3g", x) },
	"dur":  func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"kstr": func(k int) string { return map[bool]string{true: "adaptive", false: fmt.Sprint(k)}[k == 0] },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mdap run report: {{.S.Task}}</title>
<style>{{.CSS}}
.report-map { image-rendering: pixelated; image-rendering: crisp-edges; width: {{.MapWidth}}px; max-width: 100%; border: 1px solid var(--line); }
td { text-align: left; }</style></head>
<body><header><h1>mdap run report</h1>
<p class="muted">{{.S.Task}} · {{.S.Model}} · k={{kstr .S.K}} · {{.S.Source}}{{if .S.Run}} · run {{.S.Run}}{{end}} · written {{.Written}}</p>
{{if .S.Err}}<p class="error">the journal was read up to an error: {{.S.Err}}</p>{{end}}</header>
<main>
<h2>Counters</h2>
<table>
<tr><td>steps decided</td><td>{{num .S.Steps}}{{if ge .S.Left 0}} of {{num .S.Total}} ({{num .S.Left}} left){{end}}{{if .S.Done}}, done{{end}}</td></tr>
<tr><td>samples</td><td>{{num .S.Samples}} ({{f3 .S.SamplesPerStep}} per step; most {{.S.MostSamples}}{{if ge .S.MostStep 0}}, at step {{num .S.MostStep}}{{end}}); launched {{num .S.Launched}}, cancelled {{num .S.Cancelled}}</td></tr>
<tr><td>valid / flagged / errors</td><td>{{num .S.Valid}} / {{num .S.Flagged}} / {{num .S.Errors}}</td></tr>
<tr><td>red-flag rate</td><td>{{pct .S.FlagRate}}{{range .Flags}} · {{.Name}} {{num .Count}}{{end}}</td></tr>
<tr><td>contested / escalated / checked</td><td>{{num .S.Contested}} / {{num .S.Escalated}} / {{num .S.Checked}}</td></tr>
<tr><td>tokens in / out</td><td>{{num .S.Usage.InputTokens}} / {{num .S.Usage.OutputTokens}}</td></tr>
<tr><td>cost</td><td>{{if ge .S.CostStep 0}}{{usd .S.Cost}} at step {{num .S.CostStep}}{{else}}not in the journal before its first checkpoint{{end}}{{if gt .S.CostCap 0.0}}; cap {{usd .S.CostCap}}{{end}}</td></tr>
<tr><td>failure budget</td><td>{{if lt .S.Budget.PHat 0.0}}no valid vote{{else}}{{sci .S.Budget.Spent}} estimated chance that a decided step went wrong (p̂ {{f3 .S.Budget.PHat}}){{if ge .S.Budget.Share 0.0}}: {{pct .S.Budget.Share}} of 1 − T, T = {{.S.Target}}{{end}}{{if ge .S.Budget.Projected 0.0}}; the whole run {{sci .S.Budget.Projected}}{{end}}{{end}}</td></tr>
<tr><td>step time</td><td>{{dur .S.StepTime}}{{if and (ge .S.ETA 0) (not .S.Done)}}; ETA {{dur .S.ETA}}{{end}}</td></tr>
{{if ge .S.Pending 0}}<tr><td>pending</td><td>step {{num .S.Pending}}: its side-effect tool call had not returned</td></tr>{{end}}
</table>
<h2>Models</h2>
<table><tr><th>model</th><th>valid</th><th>flagged</th><th>errors</th><th>winner votes</th><th>tokens in</th><th>tokens out</th></tr>
{{range .S.Models}}<tr><td>{{.Model}}</td><td>{{num .Valid}}</td><td>{{num .Flagged}}</td><td>{{num .Errors}}</td><td>{{num .WinnerVotes}}</td><td>{{num .Usage.InputTokens}}</td><td>{{num .Usage.OutputTokens}}</td></tr>{{end}}
</table>
<h2>Step map</h2>
<p class="muted">{{.S.Width}} × {{.S.Height}} cells, one per step, left to right, top to bottom: pale green a step decided in k samples, deeper blue more samples (k+16 or more), purple red flags, orange contested, red escalated, dark not decided.</p>
<img class="report-map" alt="step map" src="{{.Map}}">
</main></body></html>
`))

type flagCount struct {
	Name  string
	Count int
}

// WriteHTML writes a self-contained report of the run: its counters, its
// models and the step map as a PNG data: URL, with the style inline and
// no script, so that it opens anywhere offline and can be attached to a
// ticket. The run's text (answers, tool results) is not in it.
func (r *Run) WriteHTML(w io.Writer) error {
	var png bytes.Buffer
	if err := r.WritePNG(&png); err != nil {
		return err
	}
	css, err := assets.ReadFile("assets/app.css")
	if err != nil {
		return err
	}
	st := r.Stats()
	flags := make([]flagCount, 0, len(st.Flags))
	for f, c := range st.Flags {
		flags = append(flags, flagCount{f, c})
	}
	sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	width := st.Width
	for width < 512 {
		width *= 2
	}
	return reportPage.Execute(w, map[string]any{
		"S":        st,
		"CSS":      template.CSS(css),
		"Map":      template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png.Bytes())),
		"MapWidth": width,
		"Flags":    flags,
		"Written":  time.Now().UTC().Format(time.RFC3339),
	})
}

// groupDigits writes n with thousands separated by commas.
func groupDigits(n int) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}
