package catch

import (
	"errors"
	"strings"
	"testing"

	"github.com/sourcegraph/conc/panics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTryReturnsNilWhenNothingPanics(t *testing.T) {
	ran := false
	assert.Nil(t, Try(func() { ran = true }))
	assert.True(t, ran)
}

func raise(v any) { panic(v) }

func TestTryRecoversAsPanicsTryDoes(t *testing.T) {
	for _, v := range []any{"boom", errors.New("an error"), 42} {
		got := Try(func() { raise(v) })
		want := panics.Try(func() { raise(v) })
		require.NotNil(t, got)
		require.NotNil(t, want)
		assert.Equal(t, want.Value, got.Value)
		firstLine := func(r *panics.Recovered) string { return strings.SplitN(r.AsError().Error(), "\n", 2)[0] }
		assert.Equal(t, firstLine(want), firstLine(got))
		// The stack starts where the panic was raised, as panics.Try's.
		assert.True(t, strings.Contains(string(got.Stack), "catch.raise"), "stack: %s", got.Stack)
		if err, ok := v.(error); ok {
			assert.ErrorIs(t, got.AsError(), err)
		}
	}
}

func TestTryRecoversAPanicOfNil(t *testing.T) {
	// Since Go 1.21 panic(nil) raises a *runtime.PanicNilError: still a
	// panic, not a return.
	rec := Try(func() { panic(nil) })
	require.NotNil(t, rec)
	assert.Contains(t, rec.AsError().Error(), "nil")
}

func TestTryAllocatesNothingWithoutAPanic(t *testing.T) {
	n := 0
	allocs := testing.AllocsPerRun(1000, func() {
		if Try(func() { n++ }) != nil {
			t.Fatal("a panic")
		}
	})
	assert.Zero(t, allocs)
	// panics.Try, which this replaces on the hot path, allocates.
	assert.NotZero(t, testing.AllocsPerRun(1000, func() { _ = panics.Try(func() { n++ }) }))
}
