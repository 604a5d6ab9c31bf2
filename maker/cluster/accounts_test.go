package cluster_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnAnswerInTheClientsAccountEntersNoImport pins the NATS behaviour
// the fix of JetStream's answers on any reply subject (docs/nats.md, "Not
// covered yet") rests on: with JetStream in an account of its own and the
// clients in another that imports services from it, a client's direct
// get whose reply subject is JetStream's API or an imported stream
// subject lands in the clients' account and goes no further: no stream is
// deleted or created, nothing is stored, while the client's own publishes
// and direct gets through the imports are answered in its inbox. In one
// account (as the engine runs now) the same answers delete and create
// streams (review11).
func TestAnAnswerInTheClientsAccountEntersNoImport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conf := dir + "/s.conf"
	require.NoError(t, os.WriteFile(conf, []byte(`
listen: "127.0.0.1:-1"
jetstream { store_dir: "`+dir+`" }
accounts {
  ENGINE { jetstream: enabled, users: [{user: admin, password: a}],
    exports: [{service: "$JS.API.DIRECT.GET.>"}, {service: "mdap.>"}] }
  CLIENTS { users: [{user: c, password: c}],
    imports: [{service: {account: ENGINE, subject: "$JS.API.DIRECT.GET.>"}}, {service: {account: ENGINE, subject: "mdap.>"}}] }
}
`), 0o600))
	opts, err := server.ProcessConfigFile(conf)
	require.NoError(t, err)
	opts.NoLog, opts.NoSigs = true, true
	ns, err := server.NewServer(opts)
	require.NoError(t, err)
	ns.Start()
	defer ns.Shutdown()
	require.True(t, ns.ReadyForConnections(10*time.Second))
	anc, err := nats.Connect(ns.ClientURL(), nats.UserInfo("admin", "a"))
	require.NoError(t, err)
	t.Cleanup(anc.Close)
	ajs, _ := jetstream.New(anc)
	ctx := context.Background()
	_, err = ajs.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"mdap.>"}, AllowDirect: true})
	require.NoError(t, err)
	_, err = ajs.CreateStream(ctx, jetstream.StreamConfig{Name: "V", Subjects: []string{"victim.>"}, AllowDirect: true})
	require.NoError(t, err)

	cnc, err := nats.Connect(ns.ClientURL(), nats.UserInfo("c", "c"))
	require.NoError(t, err)
	t.Cleanup(cnc.Close)
	// a publish through the import, with an ack
	m, err := cnc.Request("mdap.a", nil, 5*time.Second)
	require.NoError(t, err)
	assert.Contains(t, string(m.Data), `"stream":"S"`, "the client's publish is acknowledged in its inbox")
	_, err = cnc.Request("mdap.cfg", []byte(`{"name":"EVIL","subjects":["evil.>"],"storage":"memory"}`), 5*time.Second)
	require.NoError(t, err)
	assert.Contains(t, string(m.Data), `"stream":"S"`)
	// a direct get through the import, answered to the client's inbox
	m, err = cnc.Request("$JS.API.DIRECT.GET.S.mdap.cfg", nil, 5*time.Second)
	require.NoError(t, err)
	assert.Contains(t, string(m.Data), "EVIL", "the client's direct get is answered in its inbox")
	// the deputy: replies on the API and on a stream subject
	require.NoError(t, cnc.PublishRequest("$JS.API.DIRECT.GET.S.mdap.a", "$JS.API.STREAM.DELETE.V", nil))
	require.NoError(t, cnc.PublishRequest("$JS.API.DIRECT.GET.S.mdap.cfg", "$JS.API.STREAM.CREATE.EVIL", nil))
	require.NoError(t, cnc.PublishRequest("$JS.API.DIRECT.GET.S.mdap.cfg", "mdap.forged", nil))
	require.NoError(t, cnc.PublishRequest("$JS.API.DIRECT.GET.S.mdap.cfg", "victim.forged", nil))
	require.NoError(t, cnc.Flush())
	time.Sleep(time.Second)
	names := ajs.StreamNames(ctx)
	var got []string
	for n := range names.Name() {
		got = append(got, n)
	}
	slices.Sort(got)
	assert.Equal(t, []string{"S", "V"}, got, "no stream deleted or created")
	for st, want := range map[string]map[string]uint64{"S": {"mdap.a": 1, "mdap.cfg": 1}, "V": {}} {
		s, err := ajs.Stream(ctx, st)
		require.NoError(t, err)
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(">"))
		require.NoError(t, err)
		assert.Equal(t, want, info.State.Subjects, "%s: nothing stored by an answer", st)
	}
}
