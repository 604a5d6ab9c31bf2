package cluster_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noCredsAround leaves a test without the environment's or the working
// folder's credential, so that ClientCreds resolve only what it gives.
func noCredsAround(t *testing.T) {
	t.Setenv(cluster.CredsEnv, "")
	t.Setenv(cluster.TokenEnv, "")
	t.Chdir(t.TempDir())
}

func TestSignInPicksTheSeedOfTheRoleAndSaysHow(t *testing.T) {
	noCredsAround(t)
	dir := t.TempDir()
	_, _, err := cluster.EnsureCredentials(dir, cluster.RoleAdmin, cluster.RoleCoordinator)
	require.NoError(t, err)
	_, err = cluster.AddWorker(dir, "gpu1")
	require.NoError(t, err)

	opts, how, err := cluster.ClientCreds{Path: dir}.SignIn(cluster.RoleAdmin, "t")
	require.NoError(t, err)
	assert.NotEmpty(t, opts)
	assert.Equal(t, "the admin credential "+cluster.SeedFile(dir, cluster.RoleAdmin), how)

	_, how, err = cluster.ClientCreds{Path: dir}.SignIn(cluster.RoleWorker, "t")
	require.NoError(t, err)
	assert.Equal(t, "the worker credential "+filepath.Join(dir, "workers", "gpu1.nk"), how, "the folder's only identity")

	_, _, err = cluster.ClientCreds{Path: dir, Identity: "gpu9", PathName: "--nats-creds"}.SignIn(cluster.RoleWorker, "t")
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.ErrorIs(t, err, cluster.ErrNoIdentity)
	assert.True(t, strings.HasPrefix(err.Error(), "--nats-creds: "), "named as the caller names Path: %v", err)
	assert.Contains(t, err.Error(), "maker worker --identity NAME")

	_, _, err = cluster.ClientCreds{Path: dir, Run: "r1"}.SignIn(cluster.RoleCoordinator, "t")
	require.NoError(t, err, "the shared coordinator key when the run has none")
	require.NoError(t, os.Remove(cluster.SeedFile(dir, cluster.RoleCoordinator)))
	_, _, err = cluster.ClientCreds{Path: dir, Run: "r1"}.SignIn(cluster.RoleCoordinator, "t")
	require.ErrorIs(t, err, cluster.ErrNoRunKey)
	assert.Contains(t, err.Error(), "maker nats run add r1")
	assert.True(t, strings.HasPrefix(err.Error(), "Path: "), "an unnamed Path is Path: %v", err)

	seed := cluster.SeedFile(dir, cluster.RoleAdmin)
	_, _, err = cluster.ClientCreds{Path: seed, Identity: "gpu1"}.SignIn(cluster.RoleWorker, "t")
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.Contains(t, err.Error(), "--identity gpu1 picks workers/gpu1.nk from a credentials folder")

	bad := filepath.Join(dir, "bad.nk")
	require.NoError(t, os.WriteFile(bad, []byte("not a seed"), 0o600))
	_, _, err = cluster.ClientCreds{Path: bad}.SignIn(cluster.RoleWorker, "t")
	require.ErrorIs(t, err, cluster.ErrConfig)
	assert.ErrorIs(t, err, cluster.ErrAuth)
	assert.NotContains(t, err.Error(), cluster.ErrConfig.Error(), "the text is the message alone")
}

func TestSignInWithoutACredentialUsesTheTokenOrNothing(t *testing.T) {
	noCredsAround(t)
	opts, how, err := cluster.ClientCreds{}.SignIn(cluster.RoleWorker, "t")
	require.NoError(t, err)
	assert.Empty(t, opts)
	assert.Equal(t, "no credentials", how)

	t.Setenv(cluster.TokenEnv, "s3cret")
	opts, how, err = cluster.ClientCreds{}.SignIn(cluster.RoleWorker, "t")
	require.NoError(t, err)
	assert.Len(t, opts, 1)
	assert.Equal(t, "the token in $"+cluster.TokenEnv, how)
	assert.NotContains(t, how, "s3cret")
}

func TestDialSaysWhatToDo(t *testing.T) {
	noCredsAround(t)
	_, _, err := cluster.Dial("nats://127.0.0.1:1", cluster.ClientCreds{Path: filepath.Join(t.TempDir(), "missing.nk")}, cluster.RoleWorker, "t")
	require.ErrorIs(t, err, cluster.ErrConfig, "a credential refused before any connection")

	_, _, err = cluster.Dial("nats://127.0.0.1:1", cluster.ClientCreds{}, cluster.RoleWorker, "t")
	require.ErrorIs(t, err, cluster.ErrEngine)
	assert.NotErrorIs(t, err, cluster.ErrConfig)
	assert.Contains(t, err.Error(), "(start one with: maker nats)")

	srv := startServer(t)
	nc, js, err := cluster.Dial(srv.ClientURL(), cluster.ClientCreds{}, cluster.RoleWorker, "t")
	require.NoError(t, err)
	defer nc.Close()
	_, err = js.AccountInfo(t.Context())
	assert.NoError(t, err, "the JetStream context works")
}

func TestSeedRoleReadsTheFilesAroundTheSeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, err := cluster.EnsureCredentials(dir, cluster.RoleAdmin, cluster.RoleCoordinator)
	require.NoError(t, err)
	worker, err := cluster.AddWorker(dir, "gpu1")
	require.NoError(t, err)
	run, err := cluster.AddRunCoordinator(dir, "r1")
	require.NoError(t, err)
	assert.Equal(t, "admin", cluster.SeedRole(cluster.SeedFile(dir, cluster.RoleAdmin)))
	assert.Equal(t, "coordinator", cluster.SeedRole(cluster.SeedFile(dir, cluster.RoleCoordinator)))
	assert.Equal(t, "worker", cluster.SeedRole(worker))
	assert.Equal(t, "run coordinator", cluster.SeedRole(run))

	// A coordinator's seed copied and renamed admin.nk: its public key
	// says what it is, not its name.
	raw, err := os.ReadFile(cluster.SeedFile(dir, cluster.RoleCoordinator))
	require.NoError(t, err)
	renamed := filepath.Join(dir, "copy.nk")
	require.NoError(t, os.WriteFile(renamed, raw, 0o600))
	assert.Equal(t, "coordinator", cluster.SeedRole(renamed))

	// Alone in a folder, only its name says.
	alone := t.TempDir()
	require.NoError(t, os.WriteFile(cluster.SeedFile(alone, cluster.RoleWorker), raw, 0o600))
	assert.Equal(t, "worker", cluster.SeedRole(cluster.SeedFile(alone, cluster.RoleWorker)))
	require.NoError(t, os.WriteFile(filepath.Join(alone, "mine.nk"), raw, 0o600))
	assert.Empty(t, cluster.SeedRole(filepath.Join(alone, "mine.nk")))
	assert.Empty(t, cluster.SeedRole(filepath.Join(alone, "missing.nk")))
}

func TestWriteLeftovers(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	require.NoError(t, cluster.WriteLeftovers(&b, nil, true))
	assert.Equal(t, "[]\n", b.String(), "none is an empty array, not null")

	last := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	list := []cluster.Leftover{
		{Kind: "journal", Name: "r1", Messages: 7, Last: last, Retention: 2 * time.Hour, Holder: "host/1"},
		{Kind: "tasks", Name: "q1", Messages: 3, Results: 2, Bytes: 99, Legacy: true},
		{Kind: "route", Name: "tok", Retention: time.Hour},
	}
	b.Reset()
	require.NoError(t, cluster.WriteLeftovers(&b, list, false))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, []string{"KIND", "NAME", "MESSAGES", "BYTES", "LAST", "WRITE", "KEPT", "HELD", "BY"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"journal", "r1", "7", "-", "2026-01-02T02:04:05Z", "2h0m0s", "host/1"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"tasks", "(earlier", "mdap)", "q1", "3", "(+2", "results)", "99", "-", "until", "removed", "-"}, strings.Fields(lines[2]))
	assert.Equal(t, []string{"route", "tok", "0", "-", "-", "idle", "1h0m0s", "-"}, strings.Fields(lines[3]))

	b.Reset()
	require.NoError(t, cluster.WriteLeftovers(&b, list, true))
	var back []cluster.Leftover
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	assert.Len(t, back, 3)
	assert.Equal(t, "host/1", back[0].Holder)
}

func TestEngineCredsNoteSaysWhoSignsInWithWhat(t *testing.T) {
	t.Parallel()
	token := cluster.EngineCreds{}.Note(nil)
	assert.Contains(t, token, "warning: --auth token")
	assert.Contains(t, token, "$"+cluster.TokenEnv)

	dir := t.TempDir()
	roles := cluster.EngineCreds{Dir: dir}.Note([]cluster.Role{cluster.RoleAdmin})
	assert.Contains(t, roles, "credentials in "+dir+" (generated now)")
	assert.Contains(t, roles, "maker nats run add RUN")
	assert.Contains(t, roles, "maker nats worker add NAME")
	assert.NotContains(t, roles, "NOT accepted")

	_, _, err := cluster.EnsureCredentials(dir, cluster.RoleAdmin, cluster.RoleCoordinator, cluster.RoleWorker)
	require.NoError(t, err)
	kept := cluster.EngineCreds{Dir: dir}.Note(nil)
	assert.Contains(t, kept, "(kept)")
	assert.Contains(t, kept, "coordinator.pub is NOT accepted (--shared-coordinator accepts it)")
	assert.Contains(t, kept, "worker.pub is NOT accepted (--shared-worker accepts it)")

	shared := cluster.EngineCreds{Dir: dir, SharedCoordinator: true, SharedWorker: true}.Note(nil)
	assert.Contains(t, shared, "coordinator.nk for coordinators of every run")
	assert.Contains(t, shared, "worker.nk for every worker")
	assert.NotContains(t, shared, "NOT accepted")
}
