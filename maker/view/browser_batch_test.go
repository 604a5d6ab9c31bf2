package view_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/mdap-go/mdap/maker/view"
	"github.com/mdap-go/mdap/vote"
)

// browserSession is a headless Chromium whose console errors and
// warnings are collected.
type browserSession struct {
	ctx   context.Context
	shots string
	mu    sync.Mutex
	bad   []string
	// close ends the browser (its event streams with it): call it before
	// closing a server it holds a stream of, which waits for them.
	close func()
}

// newBrowser starts Chromium (skipping t without one) for at most limit.
func newBrowser(t *testing.T, limit time.Duration) *browserSession {
	bin := chromium()
	if bin == "" {
		t.Skip("no chromium binary found (chromium, chromium-browser, google-chrome): install Debian's chromium, or run .ci/ui.sh")
	}
	b := &browserSession{shots: os.Getenv(ScreenshotsEnv)}
	if b.shots == "" {
		b.shots = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(b.shots, 0o755))
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin),
		chromedp.Flag("headless", "new"), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 1000))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(acancel)
	b.close = acancel
	ctx, ccancel := chromedp.NewContext(actx)
	t.Cleanup(ccancel)
	_, err := chromedp.Run(ctx, chromedp.Func(func(context.Context, *chromedp.Target) error { return nil }))
	require.NoError(t, err)
	cctx, stopConsole := context.WithCancel(ctx)
	var console sync.WaitGroup
	messages := chromedp.Console(cctx)
	console.Go(func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.Type == chromedp.ConsoleException {
				b.mu.Lock()
				b.bad = append(b.bad, fmt.Sprintf("%s: %s (%s)", m.Type, m.Text, m.URL))
				b.mu.Unlock()
			}
		}
	})
	t.Cleanup(func() { stopConsole(); console.Wait() })
	ctx, tcancel := context.WithTimeout(ctx, limit)
	t.Cleanup(tcancel)
	b.ctx = ctx
	return b
}

func (b *browserSession) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.bad...)
}

func (b *browserSession) shot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		img, err := chromedp.FullScreenshot(100)(ctx, t)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(b.shots, name), img, 0o644)
	})
}

// waitText waits until the text of sel holds want. It reads the text in
// one evaluation: the page replaces the batch's nodes as it updates, so a
// node found first may be gone when its text is asked for.
func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	q, _ := json.Marshal(sel)
	expr := `(() => { const e = document.querySelector(` + string(q) + `); return e ? e.innerText : ''; })()`
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for {
			got, err := chromedp.Evaluate[string](expr)(ctx, t)
			if err != nil {
				return err
			}
			if strings.Contains(got, want) {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s says %q, not %q: %w", sel, got, want, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}

// number reads the integer a counter shows ("1,234").
func number(t *testing.T, ctx context.Context, sel string) int {
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(s), ",", ""))
	require.NoError(t, err, "%s says %q", sel, s)
	return n
}

// A run's own page (in process) in a real browser: its counters advance
// while the run goes, the failure budget and the cap are shown, and a
// click on a step lists the step's race, sample by sample, with the
// winner's votes marked.
func TestBrowserLiveRace(t *testing.T) {
	t.Parallel()
	b := newBrowser(t, 90*time.Second)
	c := sim.DefaultConfig()
	c.Seed, c.P, c.FlagRate, c.Latency = 7, 0.9, 0.05, sim.FixedLatency(time.Millisecond)
	m, err := sim.New(hanoi.Oracle{}, c)
	require.NoError(t, err)
	s := &maker.Solver{Model: m, Config: maker.Config{Vote: vote.Config{K: 3}}}
	task, err := hanoi.New(9)
	require.NoError(t, err)
	live := view.Attach(s, view.SolverInfo(s, task))
	live.Run().SetLimits(0.99, 1.5)
	h, err := view.Handler(view.Config{Run: live.Run(), Records: live})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer b.close()
	sctx, stop := context.WithCancel(context.Background())
	var run sync.WaitGroup
	run.Go(func() { _, _ = s.Solve(sctx, task) })
	defer func() { stop(); run.Wait() }()

	require.NoError(t, chromedp.Do(b.ctx, chromedp.Navigate(srv.URL+"/"), waitText("#c-left", "left of 511")))
	first := number(t, b.ctx, "#c-steps")
	require.Eventually(t, func() bool { return number(t, b.ctx, "#c-steps") > first }, 30*time.Second, 50*time.Millisecond,
		"the live counters advance")
	require.NoError(t, chromedp.Do(b.ctx, waitText("#c-budget", "spent"), waitText("#c-budget-sub", "T 0.99"),
		waitText("#c-cost", "of the $1.50 cap"), waitText("#c-eta", "done"), b.shot("4-live-done.png")))

	// The step with the most samples, clicked on the map.
	st := live.Run().Stats()
	k := st.MostStep
	box, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]float64](`(() => { document.getElementById('map-wrap').scrollIntoView(); const c = document.getElementById('map'), r = c.getBoundingClientRect(); return [r.left, r.top, r.width / c.width, c.width]; })()`))
	require.NoError(t, err)
	require.Len(t, box, 4)
	w := int(box[3])
	require.Equal(t, st.Width, w)
	x, y := box[0]+(float64(k%w)+0.5)*box[2], box[1]+(float64(k/w)+0.5)*box[2]
	require.NoError(t, chromedp.Do(b.ctx, chromedp.MouseClickXY(x, y), waitText("#step-title", "Step "+strconv.Itoa(k)),
		waitText("#step-samples", "(winner)"), waitText("#step-samples-note", "samples")))
	recJSON, err := live.Record(k)
	require.NoError(t, err)
	var rec raceRecord
	require.NoError(t, json.Unmarshal(recJSON, &rec))
	rows, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll('#step-samples tbody tr').length`))
	require.NoError(t, err)
	assert.Equal(t, len(rec.Samples), rows, "a row per sample of the race")
	assert.Equal(t, rec.Valid+rec.Flagged+rec.Errors, rows, "every sample that came back before the step was decided")
	winners, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll('#step-samples tbody tr.winner').length`))
	require.NoError(t, err)
	assert.Equal(t, rec.Votes[rec.Key], winners)
	require.NoError(t, chromedp.Do(b.ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('step-section').scrollIntoView()`), b.shot("5-race.png")))
	assert.Empty(t, b.problems(), "the page logged errors")
}

// A batch's state folder in a real browser: its tasks by status, and a
// click on a task opens its run.
func TestBrowserBatch(t *testing.T) {
	t.Parallel()
	b := newBrowser(t, 60*time.Second)
	dir, results, h7 := stateFolder(t)
	f, err := view.OpenFolder(dir, results, 2)
	require.NoError(t, err)
	defer f.Close()
	fctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, f.Follow(fctx, 10*time.Millisecond)) })
	defer func() { cancel(); wg.Wait() }()
	h, err := view.Handler(view.Config{Batch: f.Batch()})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer b.close()

	require.NoError(t, chromedp.Do(b.ctx, chromedp.Navigate(srv.URL+"/"),
		waitText("#b-tasks", "4"), waitText("#b-solved", "1"), waitText("#b-unfinished", "2"), waitText("#b-invalid", "1"),
		waitText("#b-cost", "of the $2.00 cap"), waitText("#batch-tasks", "h7")))
	// The batch goes on: h7's journal is decided whole.
	appendLines(t, filepath.Join(dir, "h7-ba9876543210.jsonl"), h7[60:]...)
	require.NoError(t, chromedp.Do(b.ctx, waitText("#b-decided", "1"), b.shot("6-batch.png"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#batch-tasks a[href*="h7-"]').click()`), // one evaluation, as waitText
		waitText("#c-steps", "127"), waitText("#source", "hanoi:N=7"), waitText("#back", "the batch"), b.shot("7-batch-task.png")))
	assert.Empty(t, b.problems(), "the page logged errors")
}
