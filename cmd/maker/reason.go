package main

import "strings"

// oneLine folds a multi-line reason (a JSON Schema validation error lists
// each problem on its own indented line) into one line, every problem
// kept, separated by "; ", so --verbose shows it whole on one line that a
// progress bar does not overwrite.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}
