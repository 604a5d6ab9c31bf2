package splitmix

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The reference outputs of SplitMix64 seeded with 0 (its first three
// draws, state advancing by the golden gamma), as in the Java and C
// reference implementations.
func TestMixMatchesTheReference(t *testing.T) {
	const gamma = 0x9e3779b97f4a7c15
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	for i, w := range want {
		assert.Equal(t, w, Mix(uint64(i)*gamma), "draw %d", i)
	}
}
