package view_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/maker/view"
)

// ScreenshotsEnv names the folder the browser test writes its
// screenshots to (a temporary one when unset).
const ScreenshotsEnv = "MDAP_UI_SCREENSHOTS"

// chromium finds a Chromium or Chrome binary, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// The page in a real browser: it loads with no console error, its
// counters advance while the journal grows, and a click on a cell shows
// that step's record. Not race-built: CI's ui stage runs it (.ci/ui.sh,
// where a skip fails the stage), and the Go side it drives, a followed
// journal served as events, is race-built in
// TestEventsFollowAGrowingJournal; here it would be a second Chromium run
// of the same page, ten seconds of the default suite.
func TestBrowser(t *testing.T) {
	t.Parallel()
	if raceEnabled {
		t.Skip("race-built: the browser test of a journal's page runs in CI's ui stage (.ci/ui.sh); TestEventsFollowAGrowingJournal race-tests what it serves")
	}
	bin := chromium()
	if bin == "" {
		t.Skip("no chromium binary found (chromium, chromium-browser, google-chrome): install Debian's chromium, or run .ci/ui.sh")
	}
	shots := os.Getenv(ScreenshotsEnv)
	if shots == "" {
		shots = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))

	_, lines, _ := realJournal(t, 9)
	path := filepath.Join(t.TempDir(), "growing.jsonl")
	appendLines(t, path, lines[:41]...)
	j, err := view.OpenFile(path)
	require.NoError(t, err)
	defer j.Close()
	fctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, j.Follow(fctx, 10*time.Millisecond)) })
	defer func() { cancel(); wg.Wait() }()
	h, err := view.Handler(view.Config{Run: j.Run(), Records: j})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin),
		chromedp.Flag("headless", "new"), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 1000))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer acancel()
	ctx, ccancel := chromedp.NewContext(actx)
	defer ccancel()

	// The first Run starts the browser: no timeout on it (chromedp's rule).
	_, err = chromedp.Run(ctx, chromedp.Func(func(context.Context, *chromedp.Target) error { return nil }))
	require.NoError(t, err)
	cctx, ccancelConsole := context.WithCancel(ctx)
	var problems []string
	var console sync.WaitGroup
	messages := chromedp.Console(cctx)
	console.Go(func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.Type == chromedp.ConsoleException {
				problems = append(problems, fmt.Sprintf("%s: %s (%s)", m.Type, m.Text, m.URL))
			}
		}
	})
	ctx, tcancel := context.WithTimeout(ctx, 60*time.Second) // the rest
	defer tcancel()

	shot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			b, err := chromedp.FullScreenshot(100)(ctx, t) // 100: PNG
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name), b, 0o644)
		})
	}
	text := func(sel, want string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			for {
				got, err := chromedp.Text(chromedp.CSS(sel))(ctx, t)
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

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"),
		text("#c-steps", "40"), text("#c-left", "471 left of 511"), shot("1-loaded.png")))

	appendLines(t, path, lines[41:200]...)
	require.NoError(t, chromedp.Do(ctx, text("#c-steps", fmt.Sprint(countSteps(lines[:200]))), shot("2-growing.png")))
	appendLines(t, path, lines[200:]...)
	require.NoError(t, chromedp.Do(ctx, text("#c-steps", "511"), text("#c-eta", "done")))

	// Step 21 is at (21 mod 16, 21 / 16) of the 16-wide map.
	box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.getElementById('map').getBoundingClientRect(); return [r.left, r.top, r.width / 16]; })()`))
	require.NoError(t, err)
	require.Len(t, box, 3)
	x, y := box[0]+(float64(21%16)+0.5)*box[2], box[1]+(float64(21/16)+0.5)*box[2]
	require.NoError(t, chromedp.Do(ctx, chromedp.MouseClickXY(x, y),
		text("#step-title", "Step 21"), text("#step-summary", "winning key"), text("#step-votes", "(winner)"),
		text("#detail-note", "does not hold each sample"), shot("3-step.png")))
	rec, err := j.Record(21)
	require.NoError(t, err)
	summary, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#step-summary")))
	require.NoError(t, err)
	assert.Contains(t, summary, keyOf(t, rec), "the clicked step's own record")

	ccancelConsole()
	console.Wait()
	assert.Empty(t, problems, "the page logged errors")
	t.Logf("screenshots in %s", shots)
}

// countSteps is the number of step records among lines (a header and
// checkpoints are not steps).
func countSteps(lines [][]byte) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(string(l), `{"step":`) {
			n++
		}
	}
	return n
}

func keyOf(t *testing.T, rec []byte) string {
	s := string(rec)
	i := strings.Index(s, `"key":"`)
	require.GreaterOrEqual(t, i, 0)
	s = s[i+len(`"key":"`):]
	return s[:strings.IndexByte(s, '"')]
}
