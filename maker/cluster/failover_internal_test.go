package cluster

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// stallProxy forwards TCP connections to a server; stall makes every
// connection open at that moment a stalled node's: nothing more passes
// from the server (and, unless only the replies are lost, to it), and
// the connection stays open (as with a server process stopped by
// SIGSTOP). Connections made later pass.
type stallProxy struct {
	l     net.Listener
	to    string
	mu    sync.Mutex
	conns [][2]*atomic.Bool // per connection: to the server stalled, from it stalled
	// frozen: nothing is read from either side any more, so the
	// kernel's buffers fill and a sender's writes block, as with a
	// process stopped by SIGSTOP.
	frozen atomic.Bool
	wg     sync.WaitGroup
}

func startStallProxy(t *testing.T, to string) *stallProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &stallProxy{l: l, to: to}
	p.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			up, down := &atomic.Bool{}, &atomic.Bool{}
			p.mu.Lock()
			p.conns = append(p.conns, [2]*atomic.Bool{up, down})
			p.mu.Unlock()
			pipe := func(dst, src net.Conn, stalled *atomic.Bool) {
				defer dst.Close()
				buf := make([]byte, 32<<10)
				for {
					for p.frozen.Load() {
						time.Sleep(10 * time.Millisecond)
					}
					n, err := src.Read(buf)
					if n > 0 && !stalled.Load() {
						if _, werr := dst.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}
			p.wg.Go(func() { pipe(s, c, up) })
			p.wg.Go(func() { pipe(c, s, down) })
		}
	})
	t.Cleanup(func() { p.frozen.Store(false); l.Close(); p.wg.Wait() })
	return p
}

func (p *stallProxy) url() string { return "nats://" + p.l.Addr().String() }

func (p *stallProxy) stall(repliesOnly bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c[0].Store(!repliesOnly)
		c[1].Store(true)
	}
}

// A coordinator whose server stops answering (its connection open,
// nothing coming back: a node stopped by SIGSTOP) leaves it within
// StallDetect, and the journal lines it appended meanwhile are stored
// once each: their acknowledgements were lost with the connection, so
// Flush publishes them again, and the lease is renewed on the new
// connection before it expires. When the lines reached the server and
// only its answers were lost, the copies published again are
// recognised, not taken for another coordinator's lines.
func TestJournalSurvivesAStalledServer(t *testing.T) {
	t.Parallel()
	t.Run("nothing passes", func(t *testing.T) { t.Parallel(); journalStall(t, false) })
	t.Run("the answers are lost", func(t *testing.T) { t.Parallel(); journalStall(t, true) })
}

func journalStall(t *testing.T, repliesOnly bool) {
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	proxy := startStallProxy(t, srv.ClientURL()[len("nats://"):])
	nc, err := Connect(proxy.url(), t.Name())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, ensureRunStreams(ctx, js, 1))
	st, err := js.Stream(ctx, JournalsStream)
	require.NoError(t, err)
	l, err := acquireLease(ctx, js, LeaseBucket, "r", JournalConfig{})
	require.NoError(t, err)
	t.Cleanup(l.release)
	s := &journalStore{js: js, stream: st, run: "r", subject: journalSubject + "r", lease: l, maxAge: DefaultRetention}
	require.NoError(t, s.load(ctx))
	require.NoError(t, s.Append([]byte(`{"n":1}`)))
	require.NoError(t, s.Flush())

	proxy.stall(repliesOnly)
	began := time.Now()
	for _, line := range []string{`{"n":2}`, `{"n":3}`, `{"n":4}`} {
		require.NoError(t, s.Append([]byte(line)))
	}
	require.NoError(t, s.Flush(), "the lines sent to the stalled server are published again once the client left it")
	took := time.Since(began)
	assert.Less(t, took, StallDetect+2*appendTry, "the client left the stalled server within StallDetect")
	t.Logf("lines stored %s after the server stalled (StallDetect %s)", took.Round(time.Millisecond), StallDetect)
	require.NoError(t, l.check(), "the lease outlived the stall")

	c := &journalStore{js: js, stream: st, run: "r", subject: journalSubject + "r"}
	require.NoError(t, c.load(ctx))
	var lines []string
	require.NoError(t, c.Lines(0, func(_ int, l []byte) error { lines = append(lines, string(l)); return nil }))
	assert.Equal(t, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`, `{"n":4}`}, lines, "each line once, in order")
}

// A client that is sending when its server stops (a node stopped by
// SIGSTOP: nothing read, the kernel's buffers full, each write blocks)
// leaves it for another of its URLs within StallDetect, as one that is
// idle does: a write blocked on the stopped server holds the connection's
// lock, and with nats.go's default write timeout (a minute) the pings
// that find the server stalled wait for it.
func TestBusyClientLeavesAStoppedServer(t *testing.T) {
	t.Parallel()
	srv, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	proxy := startStallProxy(t, srv.ClientURL()[len("nats://"):])
	moved := make(chan struct{}, 1)
	nc, err := Connect(proxy.url()+","+srv.ClientURL(), t.Name(), nats.DontRandomize(),
		nats.ReconnectHandler(func(*nats.Conn) { moved <- struct{}{} }))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	require.Equal(t, proxy.url(), nc.ConnectedUrl())

	proxy.frozen.Store(true)
	began := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(done); wg.Wait() }()
	wg.Go(func() { // a coordinator publishing jobs
		payload := make([]byte, 64<<10)
		for {
			select {
			case <-done:
				return
			default:
			}
			_ = nc.Publish("mdap.test.flood", payload)
		}
	})
	select {
	case <-moved:
		took := time.Since(began)
		t.Logf("moved to %s %s after its server stopped (StallDetect %s)", nc.ConnectedUrl(), took.Round(time.Millisecond), StallDetect)
		assert.Less(t, took, StallDetect+2*time.Second)
	case <-time.After(StallDetect + 15*time.Second):
		t.Fatalf("still on the stopped server %s after it stopped (StallDetect %s)", time.Since(began).Round(time.Millisecond), StallDetect)
	}
}

// A try to store a message that gets no answer (the stream's leader on a
// node that stopped, while the client's own node lives and so keeps its
// connection: in the NATS cluster stage, a 20 s stop of a node held a
// reply's one try for its whole minute, and the run stalled for 50 to
// 60 s) is made again after publishTry under the same message ID, as is
// one answered "duplicate message id is in process" (a clustered stream
// still storing the first copy), and the answer to a later try is taken:
// a worker's reply, and a Drawer's job.
func TestAnUnansweredPublicationIsMadeAgain(t *testing.T) {
	t.Parallel()
	_, nc, js := serveInternal(t)
	ctx := context.Background()

	// leader stands for a stream's leader that is lost with the first
	// try, is still storing it at the second, and acknowledges the
	// third; it returns the message IDs it was sent.
	leader := func(t *testing.T, subject string) func() []string {
		var mu sync.Mutex
		var ids []string
		sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
			mu.Lock()
			ids = append(ids, m.Header.Get(jetstream.MsgIDHeader))
			try := len(ids)
			mu.Unlock()
			switch try {
			case 1:
			case 2:
				_ = m.Respond([]byte(`{"error":{"code":400,"err_code":10158,"description":"duplicate message id is in process"}}`))
			default:
				_ = m.Respond([]byte(`{"stream":"stand-in","seq":7}`))
			}
		})
		require.NoError(t, err)
		t.Cleanup(func() { _ = sub.Unsubscribe() })
		return func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(ids) }
	}

	t.Run("a reply", func(t *testing.T) {
		w, err := NewWorker(ctx, js, maker.ModelFunc(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
			return nil, errors.New("not called")
		}), WorkerConfig{Route: "unanswered"})
		require.NoError(t, err)
		ids := leader(t, "unanswered.reply")
		pctx, cancel := context.WithTimeout(ctx, 3*publishTry)
		defer cancel()
		began := time.Now()
		require.NoError(t, w.publishReply(pctx, nil, "tok", "key", "unanswered.reply", []byte(`{}`), "the reply's id"))
		assert.Less(t, time.Since(began), 2*publishTry+time.Second)
		assert.Equal(t, slices.Repeat([]string{"the reply's id"}, 3), ids(), "tried again, under the same message ID")
	})
	t.Run("a job", func(t *testing.T) {
		d, err := NewDrawer(ctx, js, DrawerConfig{Timeout: 3 * publishTry})
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, d.Close()) })
		ids := leader(t, "unanswered.job")
		began := time.Now()
		ack, err := d.publishJob(ctx, nil, &nats.Msg{Subject: "unanswered.job", Data: []byte(`{}`)}, "the job's id")
		require.NoError(t, err)
		assert.Equal(t, uint64(7), ack.Sequence, "the job's sequence, known")
		assert.Less(t, time.Since(began), 2*publishTry+time.Second)
		assert.Equal(t, slices.Repeat([]string{"the job's id"}, 3), ids(), "tried again, under the same message ID")
	})
}
