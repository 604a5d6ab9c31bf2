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

// TestGuardsApplyParsesTheWriteRule: the margins' text form, and each
// refused one named as the field at fault.
func TestGuardsApplyParsesTheWriteRule(t *testing.T) {
	var cfg maker.Config
	g := runsetup.DefaultGuards()
	g.WriteK = []string{"5", "bash=7", "git= 3"}
	require.NoError(t, g.Apply(&cfg))
	assert.Equal(t, maker.WriteRule{K: 5, Categories: map[categories.Category]int{"bash": 7, "git": 3}}, cfg.Writes)

	g = runsetup.DefaultGuards()
	g.WriteAnyMargin = true
	require.NoError(t, g.Apply(&cfg))
	assert.Equal(t, maker.WriteRule{AnyMargin: true}, cfg.Writes)

	for _, c := range []struct {
		margins []string
		any     bool
		field   string
		fix     string
	}{
		{[]string{"3"}, true, "WriteK", "a rule that is off"},
		{[]string{"0"}, false, "WriteK[0]", "a number from 1 to"},
		{[]string{"3", "x"}, false, "WriteK[1]", "a number from 1 to"},
		{[]string{"3", "4"}, false, "WriteK[1]", "every category is given twice"},
		{[]string{"file_read=3"}, false, "WriteK[0]", `"file_read" is not a category with side effects: use one of ` + runsetup.SideEffectCategories()},
		{[]string{"nosuch=3"}, false, "WriteK[0]", "not a category with side effects"},
		{[]string{"bash=3", "bash=4"}, false, "WriteK[1]", "category bash is given twice"},
	} {
		g := runsetup.DefaultGuards()
		g.WriteK, g.WriteAnyMargin = c.margins, c.any
		err := g.Apply(&maker.Config{})
		require.ErrorIs(t, err, fielderr.ErrConfig, "%v", c.margins)
		fe := fielderr.As(err)
		assert.Equal(t, c.field, fe.Fields[0].Name, "%v", c.margins)
		assert.Contains(t, fe.Remedy(), c.fix, "%v", c.margins)
	}
	assert.Contains(t, runsetup.SideEffectCategories(), "bash")
	assert.NotContains(t, runsetup.SideEffectCategories(), "file_read")
}

// TestGuardsApplyLeavesDefaultsZero: guards at their defaults leave the
// config as it was (a run's journal records the same settings); the
// others are set, the alarm's level and history only with the alarm on.
func TestGuardsApplyLeavesDefaultsZero(t *testing.T) {
	var cfg maker.Config
	require.NoError(t, runsetup.DefaultGuards().Apply(&cfg))
	assert.Equal(t, maker.Config{}, cfg)

	g := runsetup.DefaultGuards()
	g.FlagAlarmLevel, g.FlagAlarmHistory, g.SelfCorrection, g.ToolFirst = 1e-3, 50, true, true
	require.NoError(t, g.Apply(&cfg))
	assert.Equal(t, maker.FlagAlarm{Level: 1e-3, History: 50}, cfg.FlagAlarm)
	assert.True(t, cfg.Flags.SelfCorrection)
	assert.True(t, cfg.ToolFirst)

	g.FlagAlarm = "off"
	require.NoError(t, g.Apply(&cfg))
	assert.Equal(t, maker.FlagAlarm{Off: true}, cfg.FlagAlarm, "an alarm that is off has no level")

	g.FlagAlarm = "maybe"
	err := g.Apply(&cfg)
	require.ErrorIs(t, err, fielderr.ErrConfig)
	assert.Equal(t, "FlagAlarm", fielderr.As(err).Fields[0].Name)
}
