//go:build race

package calibrate_test

// raceEnabled: the race detector makes a sample about ten times slower.
// The whole-run experiments (12-disk Hanoi, five seeds, each policy) are
// statistics, not concurrency: under -race they run on a smaller task and
// fewer seeds, and in full without it.
const raceEnabled = true
