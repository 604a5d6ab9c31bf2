package mcpserver_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/mcpserver"
	"github.com/mdap-go/mdap/maker/problems"
	"github.com/stretchr/testify/assert"
)

// Every property of solve_problem's input beside the families' is one
// no family may take (problems.Reserved): a family so named would
// replace it in the tool's schema.
func TestReservedHoldsEverySolveProblemProperty(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(mcpserver.SolveProblemInput{})
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || !typ.Field(i).IsExported() {
			continue
		}
		assert.Contains(t, problems.Reserved, name, "SolveProblemInput.%s", typ.Field(i).Name)
	}
}
