package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
)

// TestBinaryNATSAdminCommandsWithTheWrongRole: maker nats ls and rm
// signed in with a coordinator's or a worker's seed fail at once (exit 1),
// naming the role they were given and the admin's seed to give instead;
// they waited 30 s and printed "context deadline exceeded".
func TestBinaryNATSAdminCommandsWithTheWrongRole(t *testing.T) {
	t.Parallel()
	url := startNATS(t)
	creds := childGetenv(t, cluster.CredsEnv)
	seeds := map[cluster.Role]string{cluster.RoleCoordinator: cluster.SeedFile(creds, cluster.RoleCoordinator), cluster.RoleWorker: filepath.Join(creds, "workers", "w1.nk")}
	for role, seed := range seeds {
		for _, args := range [][]string{{"nats", "ls"}, {"nats", "rm", "somerun"}} {
			began := time.Now()
			c := start(t, nil, append(args, "--nats", url, "--nats-creds", seed)...)
			assert.Equal(t, 1, c.wait(t, time.Minute), "%v as %s: %s", args, role, c.stderr.String())
			assert.Less(t, time.Since(began), 10*time.Second, "%v as %s: fails fast", args, role)
			msg := c.stderr.String()
			assert.Contains(t, msg, "the "+string(role)+" credential", args)
			assert.Contains(t, msg, "admin.nk", args)
			assert.NotContains(t, msg, "deadline exceeded", args)
		}
	}
}
