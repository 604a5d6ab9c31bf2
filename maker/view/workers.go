package view

import (
	"sort"
	"time"

	"github.com/mdap-go/mdap/maker"
)

// MaxWorkers is the most worker identities a view counts apart; the
// samples of any more are counted under OtherWorkers.
const MaxWorkers = 256

// OtherWorkers names the workers past MaxWorkers.
const OtherWorkers = "(other workers)"

// WorkerStats is one worker's share of a remote run's samples: Valid,
// Flagged and Errors as the samples it drew came back, Lost its valid
// votes for an answer that lost its step, Last when its latest sample
// came.
type WorkerStats struct {
	Worker  string    `json:"worker"`
	Samples int       `json:"samples"`
	Valid   int       `json:"valid"`
	Flagged int       `json:"flagged"`
	Errors  int       `json:"errors"`
	Lost    int       `json:"lost"`
	Last    time.Time `json:"last"`
}

// workerBook counts samples by the worker that drew them (SampleEvent's
// Worker: the engine's identity of a worker; "" in process, not counted).
type workerBook struct {
	m map[string]*WorkerStats
}

func (b *workerBook) get(w string) *WorkerStats {
	if b.m == nil {
		b.m = map[string]*WorkerStats{}
	}
	ws := b.m[w]
	if ws == nil {
		if len(b.m) >= MaxWorkers && w != OtherWorkers {
			return b.get(OtherWorkers)
		}
		ws = &WorkerStats{Worker: w}
		b.m[w] = ws
	}
	return ws
}

func (b *workerBook) sample(e maker.SampleEvent, now time.Time) {
	if e.Worker == "" {
		return
	}
	ws := b.get(e.Worker)
	ws.Samples++
	ws.Last = now
	switch {
	case e.Err != nil:
		ws.Errors++
	case e.Flag != nil:
		ws.Flagged++
	default:
		ws.Valid++
	}
}

func (b *workerBook) lost(worker string) {
	if worker != "" {
		b.get(worker).Lost++
	}
}

// list returns the workers, the most samples first.
func (b *workerBook) list() []WorkerStats {
	if len(b.m) == 0 {
		return nil
	}
	out := make([]WorkerStats, 0, len(b.m))
	for _, w := range b.m {
		out = append(out, *w)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Samples != out[j].Samples {
			return out[i].Samples > out[j].Samples
		}
		return out[i].Worker < out[j].Worker
	})
	return out
}
