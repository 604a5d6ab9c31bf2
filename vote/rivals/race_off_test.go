//go:build !race

package rivals

// raceDetector: see race_on_test.go.
const raceDetector = false
