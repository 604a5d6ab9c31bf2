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
	inbox := "_INBOX_UKEY.conn"
	for _, role := range []Role{RoleWorker, RoleCoordinator, RunRole("r1")} {
		for _, subj := range Permissions(role, inbox).Publish.Allow {
			if strings.HasPrefix(subj, cancelSubject) {
				continue
			}
			imported := false
			for _, s := range clientServices() {
				imported = imported || within(subj, s.subject)
			}
			assert.Truef(t, imported, "%s may publish on %s, which the clients' account does not import", role, subj)
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
