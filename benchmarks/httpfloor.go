package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// httpFloor is the least an HTTP client spends on the requests of a
// voting run: the reference loop's requests, recorded once and encoded
// already, sent again with the reference loop's plain net/http client,
// each reply read to its end and dropped. No JSON is encoded or decoded,
// nothing is voted on: what is left is net/http, the runtime's scheduling
// of its goroutines, and the system calls, which every Go client of the
// same requests pays. Its rows in the overhead suite say how much of the
// reference loop's CPU, and of mdap's, is that.
type httpFloor struct {
	url     string
	samples int
	// one holds the reference loop's requests in order, one per sample.
	one [][]byte
	// waves holds each step's requests as the solver's waves send them
	// when a step is decided in one wave: the first sample's (temperature
	// 0) and one for the others (n of them, from the second sample's
	// seed), sent at once.
	waves [][]json.RawMessage
}

// errFloorRequest is a floor request the server did not answer 200.
var errFloorRequest = errors.New("benchmarks: http floor: the server refused a request")

// recordFloor runs the reference loop once over the serve-sim at baseURL
// (disks-disk Hanoi, margin k) and keeps its requests.
func recordFloor(ctx context.Context, baseURL, model string, disks, k int) (*httpFloor, error) {
	rec := &recorder{rt: http.DefaultTransport.(*http.Transport).Clone()}
	run, err := ReferenceLoop(ctx, rec, baseURL, model, disks, k)
	if err != nil {
		return nil, fmt.Errorf("benchmarks: http floor: recording: %w", err)
	}
	f := &httpFloor{url: baseURL + "/chat/completions", samples: run.Samples, one: rec.bodies}
	// A step's requests begin with seed 1 (sample 0) and go on in order.
	for i := 0; i < len(rec.bodies); {
		end := i + 1
		for end < len(rec.bodies) && seedOf(rec.bodies[end]) != 1 {
			end++
		}
		step := []json.RawMessage{rec.bodies[i]}
		if n := end - i - 1; n > 0 {
			var body map[string]any
			if err := json.Unmarshal(rec.bodies[i+1], &body); err != nil {
				return nil, fmt.Errorf("benchmarks: http floor: %w", err)
			}
			body["n"] = n
			b, err := json.Marshal(body)
			if err != nil {
				return nil, fmt.Errorf("benchmarks: http floor: %w", err)
			}
			step = append(step, b)
		}
		f.waves = append(f.waves, step)
		i = end
	}
	return f, nil
}

// seedOf is a recorded request's seed, 0 if it has none.
func seedOf(body []byte) int {
	var v struct {
		Seed int `json:"seed"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Seed
}

// recorder keeps the bodies of the requests it passes on.
type recorder struct {
	rt     http.RoundTripper
	bodies [][]byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	r.bodies = append(r.bodies, b)
	req.Body = io.NopCloser(bytes.NewReader(b))
	return r.rt.RoundTrip(req)
}

// floorClient is the reference loop's client (see ReferenceLoop).
func floorClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: time.Minute}
}

// send posts body as the reference loop does and reads the reply to its
// end into buf's room, dropping it.
func (f *httpFloor) send(ctx context.Context, client *http.Client, body, buf []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer placeholder")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	for {
		_, err := resp.Body.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: HTTP %d", errFloorRequest, resp.StatusCode)
	}
	return nil
}

// runOne sends the reference loop's requests one at a time, as it does:
// one request per sample. It returns the samples they carry.
func (f *httpFloor) runOne(ctx context.Context) (int, error) {
	client := floorClient()
	defer client.CloseIdleConnections()
	buf := make([]byte, 32<<10)
	for _, b := range f.one {
		if err := f.send(ctx, client, b, buf); err != nil {
			return 0, fmt.Errorf("benchmarks: http floor: %w", err)
		}
	}
	return f.samples, nil
}

// runWaves sends each step's requests at once (the second, when there
// is one, from a goroutine of its own), step after step: the requests
// the solver's waves with samples per request send. It returns the
// samples they carry.
func (f *httpFloor) runWaves(ctx context.Context) (int, error) {
	client := floorClient()
	defer client.CloseIdleConnections()
	bufs := [2][]byte{make([]byte, 32<<10), make([]byte, 32<<10)}
	errc := make(chan error, 1)
	for _, step := range f.waves {
		if len(step) > 1 {
			go func() { errc <- f.send(ctx, client, step[1], bufs[1]) }()
		}
		err := f.send(ctx, client, step[0], bufs[0])
		if len(step) > 1 {
			err = errors.Join(err, <-errc)
		}
		if err != nil {
			return 0, fmt.Errorf("benchmarks: http floor: %w", err)
		}
	}
	return f.samples, nil
}
