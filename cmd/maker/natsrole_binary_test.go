package main

import (
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
	creds := childGetenv(t, natsCredsEnv)
	for _, role := range []cluster.Role{cluster.RoleCoordinator, cluster.RoleWorker} {
		for _, args := range [][]string{{"nats", "ls"}, {"nats", "rm", "somerun"}} {
			began := time.Now()
			c := start(t, nil, append(args, "--nats", url, "--nats-creds", cluster.SeedFile(creds, role))...)
			assert.Equal(t, 1, c.wait(t, time.Minute), "%v as %s: %s", args, role, c.stderr.String())
			assert.Less(t, time.Since(began), 10*time.Second, "%v as %s: fails fast", args, role)
			msg := c.stderr.String()
			assert.Contains(t, msg, "the "+string(role)+" credential", args)
			assert.Contains(t, msg, "admin.nk", args)
			assert.NotContains(t, msg, "deadline exceeded", args)
		}
	}
}
