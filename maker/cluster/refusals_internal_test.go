package cluster

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A refusal that an unlessRefused call is waiting for is its answer and
// is not printed; any other asynchronous error of the connection is, as
// nats.go's default handler prints it; a refusal of a subject tried
// before is still kept quiet for refusalLinger, since nats.go may call
// the handler after the call saw it.
func TestOnlyUnaskedRefusalsArePrinted(t *testing.T) {
	t.Parallel()
	_, nc, _ := serveInternal(t)
	var printed bytes.Buffer
	onAsyncError := printAsyncErrors(&printed)
	refusal := func(subject string) error {
		return fmt.Errorf("%w: Permissions Violation for Publish to %q", nats.ErrPermissionViolation, subject)
	}

	done := probing(nc, "mdap.engine.journal.r")
	onAsyncError(nc, nil, refusal("mdap.engine.journal.r"))
	assert.Empty(t, printed.String(), "the refusal asked for")
	onAsyncError(nc, nil, refusal("mdap.engine.journal.other"))
	assert.Contains(t, printed.String(), `nats: permissions violation: Permissions Violation for Publish to "mdap.engine.journal.other" on connection [`)
	printed.Reset()
	onAsyncError(nc, nil, nats.ErrSlowConsumer)
	assert.Contains(t, printed.String(), "nats: slow consumer, messages dropped on connection [")
	printed.Reset()

	done()
	time.Sleep(50 * time.Millisecond) // the handler's goroutine, a moment after the call
	onAsyncError(nc, nil, refusal("mdap.engine.journal.r"))
	assert.Empty(t, printed.String(), "a late report of the refusal asked for")
	require.Eventually(t, func() bool { _, ok := probes.Load(nc); return !ok }, 2*refusalLinger, 10*time.Millisecond, "forgotten after refusalLinger")
	onAsyncError(nc, nil, refusal("mdap.engine.journal.r"))
	assert.Contains(t, printed.String(), `"mdap.engine.journal.r" on connection [`, "a refusal no call waits for")
}
