package main

import (
	"github.com/mdap-go/mdap/maker/models/modelsfile"
	"github.com/spf13/pflag"
	"io"
)

// loadModelsFile reads --models FILE ("-": stdin; modelsfile.Load) into
// f.Models: after the --model specs given, or in place of the default
// sim when no --model was given. Once per run; errors are usage errors
// naming the file and the line.
func (f *runFlags) loadModelsFile(fs *pflag.FlagSet, stdin io.Reader) error {
	if f.modelsLoaded || !fs.Changed("models") {
		return nil
	}
	f.modelsLoaded = true
	if f.modelsFile == "" {
		return usageErr("--models \"\": give the models file's name")
	}
	specs, err := modelsfile.Load(f.modelsFile, stdin)
	if err != nil {
		return usageErr("--models %s: %w", f.modelsFile, err)
	}
	if fs.Changed("model") {
		f.Models = append(f.Models, specs...)
	} else {
		f.Models = specs
	}
	return nil
}
