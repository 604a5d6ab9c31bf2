//go:build !race

package vote

// raceDetector: see race_on_test.go.
const raceDetector = false
