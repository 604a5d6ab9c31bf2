//go:build race

package view_test

// raceEnabled: the test binary is race-built (the default suite, `go test
// -race ./...`).
const raceEnabled = true
