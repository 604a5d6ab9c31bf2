//go:build race

package adaptive_test

// raceEnabled: the race detector makes a sample about ten times slower;
// the Monte Carlo tests run fewer seeds under it.
const raceEnabled = true
