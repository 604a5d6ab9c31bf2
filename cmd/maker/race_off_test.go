//go:build !race

package main

// raceEnabled: the tests run without -race (see race_on_test.go).
const raceEnabled = false
