package models

import (
	"context"
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

// Pool is the transport under the model's calls.
func (m *model) Pool() *http.Transport { return m.HTTP.Transport.(*transport).base.(*http.Transport) }

// Classify is classify of a call that saw nothing.
func (m *model) Classify(ctx context.Context, err error) error {
	return m.classify(ctx, seen{}, err, 0)
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
