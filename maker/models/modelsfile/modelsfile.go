// Package modelsfile reads a models file (maker's --models FILE): the
// per-model --model specs of a run, an ensemble, a calibration or a
// worker, one a line or as a JSON array, each checked as package models
// checks a --model.
package modelsfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mdap-go/mdap/internal/safefile"
	"github.com/mdap-go/mdap/maker/models"
	_ "github.com/mdap-go/mdap/maker/models/all" // every provider a spec may name
)

// MaxBytes and MaxModels bound a models file
// (Parse): a file larger or holding more specs is refused.
const (
	MaxBytes  = 1 << 20
	MaxModels = 256
)

// Read opens the models file at path without blocking (a FIFO
// or a device is refused at once) and parses at most MaxBytes
// of it (Parse). Errors: the file's, or Parse's.
func Read(path string) ([]string, error) {
	file, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return parseFrom(file)
}

// Load is Read, but reads standard input (stdin) when path is "-".
func Load(path string, stdin io.Reader) ([]string, error) {
	if path != "-" {
		return Read(path)
	}
	return parseFrom(stdin)
}

// parseFrom parses at most MaxBytes+1 bytes of r (Parse refuses more).
func parseFrom(r io.Reader) ([]string, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading it: %w", err)
	}
	return Parse(data)
}

// Parse reads a models file: the --model specs of a run, an
// ensemble, a calibration or a worker, each in the per-model form
// ("openai:qwen3=0.1/0.3;base=http://127.0.0.1:8000/v1;key=QWEN_KEY;rpm=600").
// Two forms:
//
//   - lines: one spec a line; surrounding spaces are trimmed, and blank
//     lines and lines starting with # are skipped;
//   - JSON: a document starting with '[': an array of spec strings.
//
// Every spec is checked as models.CheckSpec checks a --model (nothing is opened,
// no key is read). Errors wrap models.ErrSpec and name the line: "line 3: ...".
// A file with no spec, over MaxBytes or with more than
// MaxModels specs is refused. Cost: linear in the file.
func Parse(data []byte) ([]string, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%w: the file has %d bytes: at most %d", models.ErrSpec, len(data), MaxBytes)
	}
	var specs []string
	var err error
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		specs, err = jsonSpecs(data)
	} else {
		specs, err = lineSpecs(data)
	}
	if err != nil {
		return nil, err
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("%w: no model in the file: write one spec a line (%s), or a JSON array of them", models.ErrSpec, models.Specs)
	}
	return specs, nil
}

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}

func checkedSpec(specs []string, spec string, line int) ([]string, error) {
	if len(specs) == MaxModels {
		return nil, fmt.Errorf("%w: line %d: more than %d models", models.ErrSpec, line, MaxModels)
	}
	if err := models.CheckSpec(spec); err != nil {
		return nil, fmt.Errorf("line %d: %q: %w", line, spec, err)
	}
	return append(specs, spec), nil
}

func lineSpecs(data []byte) ([]string, error) {
	var specs []string
	for i, raw := range strings.Split(string(data), "\n") {
		spec := strings.TrimSpace(raw)
		if spec == "" || strings.HasPrefix(spec, "#") {
			continue
		}
		var err error
		if specs, err = checkedSpec(specs, spec, i+1); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

func jsonSpecs(data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	bad := func(err error) error {
		off := dec.InputOffset()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: line %d: the JSON array ends early: want [\"openai:gpt-4.1-mini\", ...]", models.ErrSpec, lineAt(data, int64(len(data))))
		}
		return fmt.Errorf("%w: line %d: %v: want a JSON array of spec strings, [\"openai:gpt-4.1-mini\", ...]", models.ErrSpec, lineAt(data, off), err)
	}
	if _, err := dec.Token(); err != nil { // '[', checked by the caller
		return nil, bad(err)
	}
	var specs []string
	for dec.More() {
		start := dec.InputOffset()
		var spec string
		if err := dec.Decode(&spec); err != nil {
			return nil, bad(err)
		}
		// The element starts after the separator and spaces that follow
		// the offset before it.
		rest := data[start:]
		skip := len(rest) - len(bytes.TrimLeft(rest, " \t\r\n,"))
		var err error
		if specs, err = checkedSpec(specs, strings.TrimSpace(spec), lineAt(data, start+int64(skip))); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return nil, bad(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: line %d: data after the JSON array", models.ErrSpec, lineAt(data, dec.InputOffset()))
	}
	return specs, nil
}
