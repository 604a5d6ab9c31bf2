package cluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// nuidDigits are NUID's base-62 digits (github.com/nats-io/nuid).
const nuidDigits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func nuidSeq(s string) int64 {
	var v int64
	for _, c := range s {
		v = v*62 + int64(strings.IndexRune(nuidDigits, c))
	}
	return v
}

func nuidText(seq int64) string {
	var b [10]byte
	for i := 9; i >= 0; i-- {
		b[i] = nuidDigits[seq%62]
		seq /= 62
	}
	return string(b[:])
}

// TestAWorkerCannotGuessTheEnginesOwnToken (review11, high): the
// embedded server lets in, as the admin, any client that shows its
// internal token (roleAuth.Check: no key, the token), and that token was
// nuid.Next()+nuid.Next(), from the process's one NUID generator: a
// 12-character prefix drawn once and a sequence that grows by a fixed
// step. The engine's agent, in the same process, names each delivery
// with nuid.Next() (the Mdap-Handle header every worker is sent), so a
// worker handed a few jobs read the prefix and the step from its
// handles and found the token in 71 and 142 guesses, signing in as the
// admin. The token is now 256 bits from crypto/rand: the same guesses,
// a thousand of them, made from the process's generator itself, find
// nothing; and the handles are crypto/rand's too.
func TestAWorkerCannotGuessTheEnginesOwnToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys, _, err := cluster.EnsureCredentials(dir)
	require.NoError(t, err)
	srv, err := cluster.StartServer(cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Roles: keys})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// An honest coordinator's calls wait for a worker of the route.
	const route = "review11-token"
	_, cjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleCoordinator))
	d := newDrawer(t, cjs, cluster.DrawerConfig{Timeout: 30 * time.Second, NoWorker: rawPullsOnly})
	remote, err := d.Model(route)
	require.NoError(t, err)
	calls, stopCalls := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopCalls(); wg.Wait() }()
	for i := range 6 {
		wg.Go(func() {
			_, _ = remote.GenerateContent(calls, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, fmt.Sprint("call ", i))})
		})
	}

	// The rogue worker: its route's consumer asked for as any worker's,
	// then a pull through the engine, as any worker's; it reads the
	// handles of the jobs it is sent.
	wnc, wjs := connectAs(t, url, cluster.SeedFile(dir, cluster.RoleWorker))
	_, err = cluster.NewWorker(ctx, wjs, simModel(t, 1), cluster.WorkerConfig{Route: route})
	require.NoError(t, err)
	var handles []string
	for pull := 0; len(handles) < 4 && pull < 10; pull++ {
		inbox := wnc.NewInbox()
		sub, err := wnc.SubscribeSync(inbox)
		require.NoError(t, err)
		req, _ := json.Marshal(map[string]any{"route": route, "n": 8, "wait": time.Second})
		require.NoError(t, wnc.PublishRequest("mdap.engine.work."+strings.TrimPrefix(wnc.Opts.InboxPrefix, "_INBOX_")+".pull", inbox, req))
		for {
			m, err := sub.NextMsg(5 * time.Second)
			if err != nil || m.Header.Get("Mdap-End") != "" {
				break
			}
			handles = append(handles, m.Header.Get("Mdap-Handle"))
		}
		_ = sub.Unsubscribe()
	}
	require.GreaterOrEqual(t, len(handles), 2, "the rogue worker is sent jobs")
	// The handles are 128 random bits now (a reply's message id holds
	// one: review16), not the process's NUIDs: they tell a worker
	// nothing of the generator. The guesses read it here, in the
	// engine's process, as the handles let a worker do before.
	var seqs []int64
	prefix := nuid.Next()[:12]
	for _, h := range handles {
		assert.NotEqual(t, prefix, h[:min(12, len(h))], "a handle has the process's NUID prefix")
		n := nuid.Next()
		require.Equal(t, prefix, n[:12])
		seqs = append(seqs, nuidSeq(n[12:]))
	}
	slices.Sort(seqs)
	g := int64(0)
	for i := 1; i < len(seqs); i++ {
		a, b := g, seqs[i]-seqs[0]
		for b != 0 {
			a, b = b, a%b
		}
		g = a
	}
	var steps []int64
	for inc := int64(33); inc < 333; inc++ {
		if g%inc == 0 {
			steps = append(steps, inc)
		}
	}
	t.Logf("%d handles, prefix %s, gcd of their steps %d: steps %v", len(handles), prefix, g, steps)

	// The guesses: each a TCP connection showing a token, as the
	// engine's own connection does in process.
	addr := strings.TrimPrefix(url, "nats://")
	try := func(token string) bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		r := bufio.NewReader(c)
		if _, err := r.ReadString('\n'); err != nil { // INFO
			return false
		}
		fmt.Fprintf(c, "CONNECT {\"auth_token\":%q,\"verbose\":false,\"pedantic\":false,\"protocol\":1}\r\nPING\r\n", token)
		line, _ := r.ReadString('\n')
		return strings.HasPrefix(line, "PONG")
	}
	// 1,000 guesses in the order that found the old token in 71 and 142
	// (each a connection: 15 s of a 2-core machine's CPU ran 5,415).
	const most = 1000
	found, tries := "", 0
	deadline := time.Now().Add(15 * time.Second)
guess:
	for m := int64(1); tries < most && time.Now().Before(deadline); m++ {
		for _, inc := range steps {
			second := seqs[0] - m*inc
			token := prefix + nuidText(second-inc) + prefix + nuidText(second)
			tries++
			if try(token) {
				found = token
				break guess
			}
		}
	}
	t.Logf("%d guesses; found: %v", tries, found != "")
	if found != "" {
		admin, err := nats.Connect(url, nats.Token(found))
		require.NoError(t, err)
		defer admin.Close()
		m, err := admin.Request("$JS.API.STREAM.LIST", nil, 5*time.Second)
		require.NoError(t, err)
		t.Logf("the rogue worker, signed in with the guessed token, lists the engine's streams (the admin's only): %.160s", m.Data)
	}
	assert.Empty(t, found, "a worker guessed the engine's own token (the admin's every right)")
}
