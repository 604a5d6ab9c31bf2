package cluster_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEngineConfigValidate: each setting that cannot run is refused
// naming its field, before anything is written.
func TestEngineConfigValidate(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "store")
	ok := cluster.EngineConfig{Store: store}
	require.NoError(t, ok.Validate())
	for _, c := range []struct {
		field string
		edit  func(*cluster.EngineConfig)
	}{
		{"Addr", func(c *cluster.EngineConfig) { c.Addr = "nowhere" }},
		{"Addr", func(c *cluster.EngineConfig) { c.Addr = "127.0.0.1:99999" }}, // once refused only by StartServer, after the keys were made
		{"Store", func(c *cluster.EngineConfig) { c.Store = "" }},
		{"Monitor", func(c *cluster.EngineConfig) { c.Monitor = "0.0.0.0:8222" }},
		{"Provision.Replicas", func(c *cluster.EngineConfig) { c.Provision.Replicas = 3 }},
		{"AckWait", func(c *cluster.EngineConfig) { c.Provision.AckWait = 1 }},
		{"Auth", func(c *cluster.EngineConfig) { c.Auth = "none" }},
		{"Token", func(c *cluster.EngineConfig) { c.Auth = cluster.AuthToken }},
		{"SharedWorker", func(c *cluster.EngineConfig) { c.Auth, c.Token, c.SharedWorker = cluster.AuthToken, "t", true }},
		{"SharedCoordinator", func(c *cluster.EngineConfig) { c.Auth, c.Token, c.SharedCoordinator = cluster.AuthToken, "t", true }},
	} {
		cfg := ok
		c.edit(&cfg)
		err := cfg.Validate()
		require.ErrorIs(t, err, cluster.ErrConfig, c.field)
		fe := fielderr.As(err)
		require.NotNil(t, fe, c.field)
		assert.Equal(t, c.field, fe.Fields[0].Name)
		_, _, _, err = cfg.ServerConfig()
		assert.ErrorIs(t, err, cluster.ErrConfig, "%s: ServerConfig validates", c.field)
	}
	_, err := os.Stat(store)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing written")
}

// TestServerConfigValidate: StartServer refuses what Validate does,
// naming the field, before it starts anything.
func TestServerConfigValidate(t *testing.T) {
	t.Parallel()
	keys := cluster.RoleKeys{cluster.RoleAdmin: []string{"UKEY"}}
	ok := cluster.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()}
	require.NoError(t, ok.Validate())
	for _, c := range []struct {
		field string
		edit  func(*cluster.ServerConfig)
	}{
		{"StoreDir", func(c *cluster.ServerConfig) { c.StoreDir = "" }},
		{"Addr", func(c *cluster.ServerConfig) { c.Addr = "nowhere" }},
		{"Addr", func(c *cluster.ServerConfig) { c.Addr = "127.0.0.1:70000" }},
		{"Monitor", func(c *cluster.ServerConfig) { c.Monitor = "0.0.0.0:8222" }},
		{"Roles", func(c *cluster.ServerConfig) { c.Roles, c.Token = keys, "t" }},
		{"MaxConnsPerKey", func(c *cluster.ServerConfig) { c.Roles, c.MaxConnsPerKey = keys, -1 }},
		{"Provision.Replicas", func(c *cluster.ServerConfig) { c.Roles, c.Provision.Replicas = keys, 3 }},
		{"AckWait", func(c *cluster.ServerConfig) { c.Roles, c.Provision.AckWait = keys, 1 }},
	} {
		cfg := ok
		c.edit(&cfg)
		fe := fielderr.As(cfg.Validate())
		require.NotNil(t, fe, c.field)
		assert.Equal(t, c.field, fe.Fields[0].Name)
		_, err := cluster.StartServer(cfg)
		assert.ErrorIs(t, err, cluster.ErrConfig, c.field)
		assert.Equal(t, fe.Error(), err.Error(), c.field)
	}
}

// TestEngineConfigServes: the settings' ServerConfig makes the admin's
// key in Store/creds (and the shared keys only when asked), and a server
// started from it admits the admin and refuses a client without a key.
func TestEngineConfigServes(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	cfg := cluster.EngineConfig{Addr: "127.0.0.1:0", Store: store, SharedWorker: true}
	sc, creds, made, err := cfg.ServerConfig()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(store, "creds"), creds.Dir)
	assert.ElementsMatch(t, []cluster.Role{cluster.RoleAdmin, cluster.RoleWorker}, made)
	assert.True(t, creds.SharedWorker)
	assert.NotEmpty(t, sc.Roles[cluster.RoleWorker])
	assert.Empty(t, sc.Roles[cluster.RoleCoordinator])
	_, _, made, err = cfg.ServerConfig()
	require.NoError(t, err)
	assert.Empty(t, made, "kept at the next start")

	srv, err := cluster.StartServer(sc)
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	nc, _ := connectAs(t, srv.ClientURL(), cluster.SeedFile(creds.Dir, cluster.RoleAdmin))
	assert.True(t, nc.IsConnected())
	_, err = cluster.Connect(srv.ClientURL(), "anonymous")
	assert.Error(t, err, "a client without a key")

	tok, creds, _, err := cluster.EngineConfig{Store: t.TempDir(), Auth: cluster.AuthToken, Token: "secret"}.ServerConfig()
	require.NoError(t, err)
	assert.Equal(t, "secret", tok.Token)
	assert.Empty(t, tok.Roles)
	assert.Empty(t, creds.Dir, "no credentials folder with a token")
}
