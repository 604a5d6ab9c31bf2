// Package words holds the phrases mdap's messages share, so one fact is
// worded one way everywhere.
package words

import (
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Prefix is the longest prefix of s of at most n bytes (none for n <= 0)
// that ends on a UTF-8 boundary, so cutting never splits a character.
// Cost: at most 3 bytes looked at past n.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Plural writes n and the noun, in the plural unless n is 1: "1 step",
// "2 steps", "0 replies" (a y after a consonant becomes ies; s, x, z, ch
// and sh take es). Cost: O(len(noun)).
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + plural(noun)
}

func plural(noun string) string {
	switch {
	case len(noun) >= 2 && strings.HasSuffix(noun, "y") && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "z"),
		strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		return noun + "es"
	}
	return noun + "s"
}

// FileKind names the kind of file m describes, with its article, for a
// message saying why a file was refused: "a folder", "a named pipe
// (FIFO)", "a character device", "a device", "a socket", "a symbolic
// link", "a regular file", or "a special file". Cost: O(1).
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}
