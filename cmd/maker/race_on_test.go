//go:build race

package main

// raceEnabled: the tests run under -race, so the child binary is built
// with it too, and the kill and resume paths are race-checked.
const raceEnabled = true
