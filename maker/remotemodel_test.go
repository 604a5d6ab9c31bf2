package maker

import (
	"context"
	"sync"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// remoteScripted is a scripted model whose calls another process makes.
type remoteScripted struct{ scripted }

func (*remoteScripted) DrawsRemotely() bool { return true }

// infoObserver keeps every call's CallInfo.
type infoObserver struct {
	callObserver
	mu    sync.Mutex
	infos []CallInfo
}

func (o *infoObserver) StartCall(ctx context.Context, c CallInfo) (context.Context, func(CallResult)) {
	o.mu.Lock()
	o.infos = append(o.infos, c)
	o.mu.Unlock()
	return o.callObserver.StartCall(ctx, c)
}

func (o *infoObserver) StartTool(ctx context.Context, t ToolInfo) (context.Context, func(intent.Observation, error)) {
	return o.callObserver.StartTool(ctx, t)
}

// TestRemoteModelCallsAreObservedAsRemote: the calls of a RemoteModel
// reach the Observer with CallInfo.Remote set (so that the worker, not
// the coordinator, counts their tokens); other models' calls without it.
func TestRemoteModelCallsAreObservedAsRemote(t *testing.T) {
	right := func(_ SampleID, prompt string) (string, string) {
		return `{"next": ` + itoa(current(prompt)+1) + `}`, "stop"
	}
	for _, remote := range []bool{false, true} {
		obs := &infoObserver{}
		s := &Solver{Config: Config{Vote: vote.Config{K: 1, Parallel: 1}}, Observer: obs}
		s.Model = &scripted{reply: right}
		if remote {
			s.Model = &remoteScripted{scripted{reply: right}}
		}
		_, err := s.Solve(context.Background(), &counter{target: 2})
		require.NoError(t, err)
		require.NotEmpty(t, obs.infos)
		for _, c := range obs.infos {
			assert.Equal(t, remote, c.Remote, "%+v", c)
		}
	}
}
