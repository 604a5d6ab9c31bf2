package batch

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/families/sortlist"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
)

// problemNamed is a family whose name is a task line's own key.
type problemNamed struct{ sortlist.Family }

func (problemNamed) Name() string { return "problem" }

// TestRegisterRefusesALineKey: problems.Register refuses only a name
// another family took, not one of a task line's own keys ("problem",
// "spec", "hanoi", "task", "id", "k", ...), an MCP solve_problem property
// ("problem", "target", "p", "k", ...) or a command of maker ("run",
// "solve"). A family registered as "problem" takes every "problem" line:
// ReadJobs then dereferences the nil Job.Problem (problemSpec) and panics.
func TestRegisterRefusesALineKey(t *testing.T) {
	register := func() {
		t.Cleanup(problems.Register(problems.Builtin{Family: problemNamed{}, Input: sortlist.Input{},
			Size:     problems.Size{Max: 10, Generate: sortlist.Generate},
			Headline: func(json.RawMessage) string { return "problem" }}))
	}
	if !assert.Panics(t, register, "a family named after a line's key is a programming error") {
		assert.NotPanics(t, func() {
			ReadJobs(strings.NewReader(`{"id": "p", "problem": {"spec": "s.json", "input": {"list": [1]}}}`), t.TempDir())
		}, "a problem line with a family named problem registered")
	}
}

// Every key of a Job's JSON is one no family may take
// (problems.Reserved): a family so named would take the field's lines.
func TestReservedHoldsEveryKeyOfAJob(t *testing.T) {
	typ := reflect.TypeOf(Job{})
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		assert.Contains(t, problems.Reserved, name, "Job.%s", typ.Field(i).Name)
	}
}
