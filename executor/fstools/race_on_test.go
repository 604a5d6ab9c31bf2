//go:build race

package fstools

// raceSlowdown scales the time bounds of tests: the race detector makes
// instrumented code, the regexp matcher and the JSON codec included, many
// times slower.
const raceSlowdown = 5
