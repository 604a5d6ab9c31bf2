//go:build !race

package maker_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
