//go:build !race

package view_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
