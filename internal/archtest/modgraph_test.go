package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heavyModules are what the satellites need and a library user of the core
// must not download: the NATS engine, the charts, the observability
// exporters, the MCP SDK and the CLI's.
var heavyModules = []string{
	"github.com/nats-io/",
	"gonum.org/v1/plot",
	"go.opentelemetry.io/",
	"github.com/prometheus/",
	"github.com/modelcontextprotocol/",
	"github.com/spf13/",
	"github.com/schollz/progressbar",
}

// TestLibraryImportersDownloadOnlyWhatTheyUse loads a program that imports
// one mdap package, in a module of its own with an empty module cache, and
// lists the modules Go downloaded for it. Go's lazy module loading fetches
// only the modules whose packages the build needs, so the module is not
// split (#36): a `vote`-only importer downloads mdap and conc, nothing else,
// although `go list -m all` names all 85 modules of mdap's go.mod; an
// importer of the step loop and its providers downloads langchaingo and
// small modules, never the engine, the charts or the exporters. The
// modules come from this machine's module cache through a file:// proxy, so
// the test uses no network; it is skipped when that cache lacks them.
func TestLibraryImportersDownloadOnlyWhatTheyUse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs in fresh module caches")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	out, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	proxy := filepath.Join(strings.TrimSpace(strings.Split(string(out), string(os.PathListSeparator))[0]), "cache", "download")
	if _, err := os.Stat(filepath.Join(proxy, "github.com", "sourcegraph", "conc")); err != nil {
		t.Skipf("the module cache has no download cache to serve from (%v); run `go mod download` once", err)
	}

	downloads := func(t *testing.T, pkg string) []string {
		dir := t.TempDir()
		cache := filepath.Join(dir, "modcache")
		mod := "module example.com/user\n\ngo 1.26\n\nrequire github.com/mdap-go/mdap v0.0.0\n\nreplace github.com/mdap-go/mdap => " + root + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o600))
		prog := "package main\n\nimport _ \"github.com/mdap-go/mdap/" + pkg + "\"\n\nfunc main() {}\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(prog), 0o600))
		build := exec.Command(goBin, "list", "-deps", ".") // loads every package the build needs: downloads what a build would, compiles nothing
		build.Dir = dir
		build.Env = append(os.Environ(), "GOENV=off", "GOFLAGS=-mod=mod", "GOWORK=off", "GOSUMDB=off",
			"GOMODCACHE="+cache, "GOPROXY=file://"+filepath.ToSlash(proxy))
		msg, err := build.CombinedOutput()
		t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", cache).Run() }) // the module cache is read-only
		require.NoError(t, err, "%s", msg)
		var mods []string
		err = filepath.WalkDir(filepath.Join(cache, "cache", "download"), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".zip") {
				return err
			}
			rel, _ := filepath.Rel(filepath.Join(cache, "cache", "download"), path)
			mods = append(mods, filepath.ToSlash(filepath.Dir(filepath.Dir(rel))))
			return nil
		})
		require.NoError(t, err)
		sort.Strings(mods)
		return mods
	}

	t.Run("vote", func(t *testing.T) {
		assert.Equal(t, []string{"github.com/sourcegraph/conc"}, downloads(t, "vote"))
	})
	t.Run("maker/models", func(t *testing.T) {
		mods := downloads(t, "maker/models")
		t.Logf("an importer of maker/models downloads %d modules: %v", len(mods), mods)
		assert.Contains(t, mods, "github.com/tmc/langchaingo")
		for _, m := range mods {
			for _, heavy := range heavyModules {
				assert.False(t, strings.HasPrefix(m, heavy), "an importer of the core downloads %s", m)
			}
		}
	})
}
