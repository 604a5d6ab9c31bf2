//go:build !race

package adaptive_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
