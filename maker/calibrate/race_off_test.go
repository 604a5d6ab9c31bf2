//go:build !race

package calibrate_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
