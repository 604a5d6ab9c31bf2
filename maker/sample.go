package maker

import "context"

// SampleID names one sample of a run: the step it belongs to and its index
// in that step's race (0 is the first, drawn at temperature 0).
type SampleID struct {
	Step  int
	Index int
}

type sampleIDKey struct{}

// WithSampleID returns a context that carries id. The solver puts the
// sample's identity in the context of every model call, so that a model that
// wants determinism per (seed, step, sample), like the simulated model, can
// draw its randomness from it instead of from shared state.
func WithSampleID(ctx context.Context, id SampleID) context.Context {
	return context.WithValue(ctx, sampleIDKey{}, id)
}

// SampleIDFrom returns the sample identity in ctx, if any.
func SampleIDFrom(ctx context.Context) (SampleID, bool) {
	id, ok := ctx.Value(sampleIDKey{}).(SampleID)
	return id, ok
}
