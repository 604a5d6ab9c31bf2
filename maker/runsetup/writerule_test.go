package runsetup_test

import (
	"testing"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/runsetup"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseWriteRule(t *testing.T) {
	w, err := runsetup.ParseWriteRule([]string{"5", "bash=7", "git= 3"}, false)
	require.NoError(t, err)
	assert.Equal(t, maker.WriteRule{K: 5, Categories: map[categories.Category]int{"bash": 7, "git": 3}}, w)

	w, err = runsetup.ParseWriteRule(nil, true)
	require.NoError(t, err)
	assert.Equal(t, maker.WriteRule{AnyMargin: true}, w)

	for _, c := range []struct {
		margins []string
		any     bool
		field   string
		fix     string
	}{
		{[]string{"3"}, true, "Margins", "a rule that is off"},
		{[]string{"0"}, false, "Margins[0]", "a number from 1 to"},
		{[]string{"3", "x"}, false, "Margins[1]", "a number from 1 to"},
		{[]string{"3", "4"}, false, "Margins[1]", "every category is given twice"},
		{[]string{"file_read=3"}, false, "Margins[0]", `"file_read" is not a category with side effects: use one of ` + runsetup.SideEffectCategories()},
		{[]string{"nosuch=3"}, false, "Margins[0]", "not a category with side effects"},
		{[]string{"bash=3", "bash=4"}, false, "Margins[1]", "category bash is given twice"},
	} {
		_, err := runsetup.ParseWriteRule(c.margins, c.any)
		require.ErrorIs(t, err, fielderr.ErrConfig, "%v", c.margins)
		fe := fielderr.As(err)
		assert.Equal(t, c.field, fe.Fields[0].Name, "%v", c.margins)
		assert.Contains(t, fe.Remedy(), c.fix, "%v", c.margins)
	}
	assert.Contains(t, runsetup.SideEffectCategories(), "bash")
	assert.NotContains(t, runsetup.SideEffectCategories(), "file_read")
}
