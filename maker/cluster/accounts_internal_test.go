package cluster

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// within reports whether every subject matching pattern matches filter
// (NATS wildcards: * one token, > the rest).
func within(pattern, filter string) bool {
	p, f := strings.Split(pattern, "."), strings.Split(filter, ".")
	for i, ft := range f {
		if ft == ">" {
			return i < len(p)
		}
		if i >= len(p) {
			return false
		}
		switch pt := p[i]; {
		case pt == ">":
			return false
		case ft == "*":
		case pt == "*" || pt != ft:
			return false
		}
	}
	return len(p) == len(f)
}

// TestEveryClientPublicationIsImported: every subject a worker or a
// coordinator may publish on for the engine lies within a subject the
// clients' account imports from the engine's (clientServices), or it
// would reach nothing there; the cancellation notices, which clients send
// each other, need none. A role given a new subject (a run's own queue,
// say) fails here until clientServices names it.
func TestEveryClientPublicationIsImported(t *testing.T) {
	t.Parallel()
	assert.True(t, within("a.b.c", "a.>"))
	assert.True(t, within("a.*.c", "a.*.c"))
	assert.False(t, within("a.>", "a.*"))
	assert.False(t, within("a.b", "a.b.>"))
	assert.False(t, within("a.*", "a.b"))
	// The embedded server's inbox (a key and a connection), a stock
	// server's (a key).
	for _, inbox := range []string{"_INBOX_UKEY.conn", "_INBOX_UKEY"} {
		for _, role := range []Role{RoleWorker, RoleCoordinator, RunRole("r1")} {
			checkImported(t, role, inbox)
		}
	}
}

// checkImported checks that every subject role may publish on, but the
// cancellation notices, lies within exactly one import.
func checkImported(t *testing.T, role Role, inbox string) {
	t.Helper()
	for _, allowed := range Permissions(role, inbox).Publish.Allow {
		if strings.HasPrefix(allowed, cancelSubject) {
			continue
		}
		subjects := []string{allowed}
		if prefix, ok := strings.CutSuffix(allowed, ">"); ok && strings.HasPrefix(allowed, workSubject) {
			// A worker's identity may name any op; the agent serves these.
			subjects = []string{prefix + workPull, prefix + workAck}
		}
		for _, subj := range subjects {
			imported := 0
			for _, s := range clientServices() {
				if within(subj, s.subject) {
					imported++
				}
			}
			assert.Equalf(t, 1, imported, "%s may publish on %s, which the clients' account must import once (twice, a request reaches the engine twice)", role, subj)
		}
	}
}

// TestEngineRolesSignInToTheEngineAccount: the engine's own connection
// and the admin sign in to the engine's account, every other role to the
// clients'.
func TestEngineRolesSignInToTheEngineAccount(t *testing.T) {
	t.Parallel()
	for _, r := range []Role{RoleWorker, RoleCoordinator, RunRole("r1")} {
		assert.False(t, engineRole(r), r)
	}
	assert.True(t, engineRole(RoleAdmin))
}
