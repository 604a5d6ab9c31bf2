package observe_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/observe"
	"github.com/stretchr/testify/assert"
)

// TestWarnLoggerKeepsWarningsWithoutTimesInText: a warning logger
// drops info, redacts the held secrets and writes text lines without a
// time (JSON records keep theirs); an unknown format is text.
func TestWarnLoggerKeepsWarningsWithoutTimesInText(t *testing.T) {
	for _, format := range []string{observe.LogText, "bogus"} {
		var b bytes.Buffer
		l := observe.WarnLogger(&b, format, "sk-secret-1234")
		l.Info("quiet")
		l.Warn("loud", "why", "key sk-secret-1234")
		assert.Equal(t, 1, strings.Count(b.String(), "\n"), format)
		assert.Contains(t, b.String(), "level=WARN msg=loud", format)
		assert.NotContains(t, b.String(), "time=", format)
		assert.NotContains(t, b.String(), "sk-secret-1234", format)
	}
	var b bytes.Buffer
	observe.WarnLogger(&b, observe.LogJSON).Warn("loud")
	assert.Contains(t, b.String(), `"time":`)
	b.Reset()
	observe.Logger(&b, observe.LogJSON, &slog.HandlerOptions{Level: slog.LevelDebug}).Debug("fine")
	assert.Contains(t, b.String(), `"msg":"fine"`)
}
