package benchmarks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotReport: the data file of a folder is not a report (ReadReport).
var ErrNotReport = errors.New("not a maker bench report")

// ReadReport reads the report a run wrote into dir (its DataFile), to
// Merge a new run into. Errors: the file's (a missing file wraps
// fs.ErrNotExist), or ErrNotReport naming the file and what its JSON
// got wrong. Cost: one read of the file.
func ReadReport(dir string) (*Report, error) {
	path := filepath.Join(dir, DataFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is %w: %v", path, ErrNotReport, err)
	}
	return &r, nil
}

// Ran lists the suites r measured (those with a wall time), in the order
// of Suites.
func (r *Report) Ran() []string {
	var out []string
	for _, s := range Suites {
		if _, ok := r.SuiteWall[s]; ok {
			out = append(out, s)
		}
	}
	return out
}
