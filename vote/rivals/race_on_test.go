//go:build race

package rivals

// raceDetector: the tests run under the race detector, which slows pure
// computation several times over and finds nothing in it.
const raceDetector = true
