package cluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The agent answers only under an inbox or an import's answer subject:
// every JetStream API subject, stream subject and engine subject a
// request may name as its reply is refused, whichever prefix it borrows.
func TestTheAgentAnswersOnlyUnderAnInbox(t *testing.T) {
	for reply, want := range map[string]bool{
		"_INBOX.abc":              true,
		"_INBOX.abc.def":          true,
		"_INBOX_worker1.abc":      true,
		"_R_.xyz":                 true,
		"_R_.xyz.1":               true,
		"":                        false,
		"_INBOX":                  false,
		"_INBOX.":                 false,
		"_INBOX_":                 false,
		"_INBOX_key":              false,
		"_INBOX_key.":             false,
		"_INBOX_.abc":             false,
		"_INBOXES.abc":            false,
		"_R_.":                    false,
		"_R_":                     false,
		"_R_x.y":                  false,
		"$JS.API.STREAM.DELETE.X": false,
		"$JS.API.STREAM.CREATE.X": false,
		"$KV.MDAP_LEASES.k":       false,
		"mdap.replies.run.1":      false,
		"mdap.jobs.route":         false,
		"x._INBOX.abc":            false,
	} {
		assert.Equal(t, want, answerable(reply), "answerable(%q)", reply)
	}
}
