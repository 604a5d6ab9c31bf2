package maker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/mdap-go/mdap/intent"
)

// execute runs a winning tool intent.
func (r *run) execute(ctx context.Context, step int, ti *intent.ToolIntent) (intent.Observation, error) {
	if r.Executor == nil {
		return intent.Observation{Tool: ti.Tool, Status: intent.StatusDenied, Reason: intent.ReasonUnavailable,
			Content: "this run has no tools: answer without calling one"}, nil
	}
	ctx, end := r.observeTool(ctx, step, ti)
	obs, err := r.Executor.Execute(ctx, *ti)
	end(obs, err)
	r.logger().DebugContext(ctx, "tool call", "step", step, "tool", ti.Tool, "status", obs.Status, "truncated", obs.Truncated)
	return obs, err
}

// digest hashes what the next prompt sees of an observation, so equal
// calls give equal digests across runs (the duration is left out).
func digest(obs *intent.Observation) string {
	sum := sha256.Sum256([]byte(obs.Text()))
	return hex.EncodeToString(sum[:])
}
