package main

import (
	"embed"
	"strings"
)

// The long help and examples of the commands live in help/, one text file
// each, so the help reads as the user sees it and the Go files hold only
// what the commands do.
//
//go:embed help
var helpFiles embed.FS

// help returns help/NAME.txt, the Long text of a command.
func help(name string) string { return helpFile(name + ".txt") }

// example returns help/NAME.example.txt, the Example text of a command.
func example(name string) string { return helpFile(name + ".example.txt") }

// helpFile panics on a missing file: every command is built when the binary
// starts, so a wrong name fails every test and every run at once.
func helpFile(file string) string {
	b, err := helpFiles.ReadFile("help/" + file)
	if err != nil {
		panic("cmd/maker: no help file " + file)
	}
	return strings.TrimSuffix(string(b), "\n")
}
