package models

import (
	"context"
	"io"
	"net/http"
)

// What the external tests (package models_test, which may import the
// providers' packages, as this package's own tests may not) reach of the
// internals.

// Model is the model Open returns.
type Model = model

// ProviderNamed is the registered provider called name, or nil.
var ProviderNamed = providerNamed

// ErrorMessage reads a provider's error body.
var ErrorMessage = errorMessage

// ResponseMeta reads a reply's id and model from its first bytes.
var ResponseMeta = responseMeta

// HeadLimit bounds what a call keeps of a reply's body.
const HeadLimit = headLimit

// ErrClientPanic is the error of a client that panicked on a reply.
var ErrClientPanic = errClientPanic

// Probe is the model's client of diagnostic GETs, over its pool.
func (m *model) Probe() *http.Client { return m.probe }

// Classify is classify of a call that saw nothing.
func (m *model) Classify(ctx context.Context, err error) error {
	return m.classify(ctx, seen{}, err, 0)
}

// ReadStream reads body as Ollama's reply stream through wrap (a reader
// of chunks of any size) into buf's chunks, and says how many lines and
// bytes the call saw.
func ReadStream(body io.Reader, wrap func(io.Reader) io.Reader, buf []byte) (lines int, bytesRead int64, err error) {
	c := &call{}
	ob := &observedBody{rc: io.NopCloser(body), c: c}
	_, err = io.CopyBuffer(io.Discard, struct{ io.Reader }{wrap(ob)}, buf)
	s := c.snapshot()
	return s.ollama.lines, s.bytesRead, err
}

// Unregister takes the provider called name out of the registry, as in
// a program that never imported its package, until restore is called.
// Only a test that does not run in parallel may call it.
func Unregister(name string) (restore func()) {
	registryMu.Lock()
	defer registryMu.Unlock()
	p := registry[name]
	delete(registry, name)
	return func() {
		registryMu.Lock()
		defer registryMu.Unlock()
		registry[name] = p
	}
}
