package runsetup_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/runsetup"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestModelsCheckNamesTheFieldAtFault(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_BASE", "")
	for _, c := range []struct {
		m      runsetup.Models
		fields []string
		fix    string
	}{
		{runsetup.Models{}, []string{"Specs"}, "give a model"},
		{runsetup.Models{Specs: []string{"sim"}, BaseURL: "ftp://h/v1"}, []string{"BaseURL"}, "scheme must be http or https"},
		{runsetup.Models{Specs: []string{"sim"}, InputPrice: -1}, []string{"InputPrice"}, "use dollars per million tokens, from 0 to 1e+06"},
		{runsetup.Models{Specs: []string{"sim"}, OutputPrice: 2e6}, []string{"OutputPrice"}, "from 0 to"},
		{runsetup.Models{Specs: []string{"sim", "nosuch:x"}}, []string{"Specs[1]"}, ""},
		{runsetup.Models{Specs: []string{"sim;rpm=5"}}, []string{"Specs[0]"}, "the simulated model has none"},
		{runsetup.Models{Specs: []string{"sim"}, Structured: true}, []string{"Structured"}, "applies to a real model"},
		{runsetup.Models{Specs: []string{"anthropic:m"}, Structured: true}, []string{"Structured", "Specs[0]"}, "no structured output for anthropic"},
		{runsetup.Models{Specs: []string{"ollama:m"}, BaseURL: "http://127.0.0.1:11434/v1"}, []string{"BaseURL"}, "/v1"},
	} {
		err := c.m.Check()
		require.ErrorIs(t, err, fielderr.ErrConfig, "%+v", c.m)
		fe := fielderr.As(err)
		var names []string
		for _, f := range fe.Fields {
			names = append(names, f.Name)
		}
		assert.Equal(t, c.fields, names, "%+v", c.m)
		assert.Contains(t, fe.Remedy(), c.fix)
	}
	err := runsetup.Models{Specs: []string{"nosuch:x"}}.Check()
	assert.ErrorIs(t, err, models.ErrSpec, "a refused spec is the models package's error too")

	assert.NoError(t, runsetup.Models{Specs: []string{"sim", "openai:m"}, BaseURL: "http://127.0.0.1:1/v1", InputPrice: 1, OutputPrice: 2}.Check())
	assert.NoError(t, runsetup.Models{Specs: []string{"openai:m"}, Structured: true, BaseURL: "http://127.0.0.1:1/v1"}.Check())
}

func TestModelsCheckShowsNoPasswordOfAURL(t *testing.T) {
	err := runsetup.Models{Specs: []string{"openai:m"}, BaseURL: "ftp://user:s3cret@host/v1"}.Check()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "s3cret")
}

func TestJournalOpenCreatesResumesOrEither(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")

	j, torn, err := runsetup.Journal{}.Open()
	require.NoError(t, err)
	assert.Nil(t, j, "no path, no journal")
	assert.Zero(t, torn)

	_, _, err = runsetup.Journal{Path: path, Resume: true}.Open()
	assert.Error(t, err, "nothing to resume")

	j, _, err = runsetup.Journal{Path: path, ResumeOrStart: true, Unsigned: true}.Open()
	require.NoError(t, err, "started")
	require.NoError(t, j.Close())
	_, err = os.Stat(path)
	require.NoError(t, err)

	_, _, err = runsetup.Journal{Path: path}.Open()
	assert.Error(t, err, "an existing journal is not overwritten")

	j, _, err = runsetup.Journal{Path: path, ResumeOrStart: true, Unsigned: true}.Open()
	require.NoError(t, err, "a file there is resumed (creating would refuse it, as above)")
	require.NoError(t, j.Close())
}

// TestSpecsFromCompletesAPrefix: the simulated model, a provider's prefix
// and the price table's models, those with the prefix only.
func TestSpecsFromCompletesAPrefix(t *testing.T) {
	if got := runsetup.SpecsFrom(""); len(got) < 4 || got[0] != "sim" || !slices.Contains(got, "openai:") || !slices.Contains(got, "anthropic:") {
		t.Errorf(`runsetup.SpecsFrom("") = %v, want sim, every provider's NAME: and the known models`, got)
	}
	for _, s := range runsetup.SpecsFrom("openai:") {
		if !strings.HasPrefix(s, "openai:") {
			t.Errorf(`runsetup.SpecsFrom("openai:") has %q`, s)
		}
	}
	if got := runsetup.SpecsFrom("openai:"); len(got) < 2 {
		t.Errorf(`runsetup.SpecsFrom("openai:") = %v, want the provider and its known models`, got)
	}
	if got := runsetup.SpecsFrom("zzz"); len(got) != 0 {
		t.Errorf(`runsetup.SpecsFrom("zzz") = %v, want none`, got)
	}
}

// Journal.Validate and Run.Validate name the field at fault; a journal's
// options that need a Path say so as a clause.
func TestJournalAndRunValidateNameTheFieldAtFault(t *testing.T) {
	for _, c := range []struct {
		err   error
		field string
	}{
		{runsetup.Journal{ResumeOrStart: true, Path: "nats:r"}.Validate(), "ResumeOrStart"},
		{runsetup.Journal{Resume: true}.Validate(), "Resume"},
		{runsetup.Journal{Unsigned: true}.Validate(), "Unsigned"},
		{runsetup.Journal{RerunPending: true, Path: "j.jsonl"}.Validate(), "RerunPending"},
		{runsetup.Run{MaxCost: -1, Client: models.Options{Timeout: 1}}.Validate(), "MaxCost"},
		{runsetup.Run{}.Validate(), "Client.Timeout"},
	} {
		fe := fielderr.As(c.err)
		require.NotNil(t, fe, c.field)
		assert.Equal(t, c.field, fe.Fields[0].Name)
	}
	assert.NoError(t, runsetup.Journal{Unsigned: true, RerunPending: true, PerTask: true}.Validate())
	assert.NoError(t, runsetup.Journal{ResumeOrStart: true, Path: "j.jsonl"}.Validate())
}
