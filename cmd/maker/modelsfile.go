package main

import (
	"fmt"
	"io"

	"github.com/mdap-go/mdap/internal/safefile"
	"github.com/mdap-go/mdap/maker/models/modelsfile"
	"github.com/spf13/pflag"
)

// loadModelsFile reads --models FILE (modelsfile.Parse) into
// f.models: after the --model specs given, or in place of the default
// sim when no --model was given. Once per run; errors are usage errors
// naming the file and the line.
func (f *runFlags) loadModelsFile(fs *pflag.FlagSet) error {
	if f.modelsLoaded || !fs.Changed("models") {
		return nil
	}
	f.modelsLoaded = true
	if f.modelsFile == "" {
		return usageErr("--models \"\": give the models file's name")
	}
	specs, err := readModelsFile(f.modelsFile)
	if err != nil {
		return usageErr("--models %s: %w", f.modelsFile, err)
	}
	if fs.Changed("model") {
		f.models = append(f.models, specs...)
	} else {
		f.models = specs
	}
	return nil
}

// readModelsFile opens path without blocking (a FIFO or a device is
// refused at once) and parses at most modelsfile.MaxBytes of it.
func readModelsFile(path string) ([]string, error) {
	file, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, modelsfile.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading it: %w", err)
	}
	return modelsfile.Parse(data)
}
