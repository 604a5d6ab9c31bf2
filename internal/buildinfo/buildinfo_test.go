package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func with(t *testing.T, info *debug.BuildInfo) {
	t.Cleanup(func() { read = debug.ReadBuildInfo })
	read = func() (*debug.BuildInfo, bool) { return info, info != nil }
}

func TestProgramSaysTheStampOrDevelWithTheCommit(t *testing.T) {
	with(t, nil)
	assert.Equal(t, "devel", Program(), "no build information")
	with(t, &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}})
	assert.Equal(t, "v1.2.3", Program())
	with(t, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}})
	assert.Equal(t, "devel 0123456789ab (modified)", Program())
	with(t, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}})
	assert.Equal(t, "devel", Program(), "-buildvcs=false: no commit")
}

func TestModuleFindsTheMainModuleOrADependency(t *testing.T) {
	with(t, nil)
	assert.Equal(t, "unknown", Module("m"))
	with(t, &debug.BuildInfo{Main: debug.Module{Path: "m", Version: "(devel)"}})
	assert.Equal(t, "(devel)", Module("m"))
	with(t, &debug.BuildInfo{Main: debug.Module{Path: "user"}, Deps: []*debug.Module{{Path: "m", Version: "v0.9.0"}}})
	assert.Equal(t, "v0.9.0", Module("m"))
	assert.Equal(t, "unknown", Module("other"))
}
