package replyfile_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/replyfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Judge refuses the whole set when one reply cannot be read, with Load's
// own text, and judges nothing.
func TestJudgeRefusesAnUnreadableReply(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	require.NoError(t, os.WriteFile(good, []byte(`{"a": 1}`), 0o600))
	missing := filepath.Join(dir, "missing.txt")
	_, loadErr := replyfile.Load(missing, nil)
	require.Error(t, loadErr)

	got, err := replyfile.Judge(context.Background(), []string{good, missing}, nil, nil, 100)
	assert.Nil(t, got)
	require.ErrorIs(t, err, replyfile.ErrUnreadable)
	assert.EqualError(t, err, loadErr.Error())
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// Judge gives equal keys to replies a run counts as one answer, flags an
// empty one, and WriteText says which vote together.
func TestJudgeGroupsRepliesAndWriteTextSaysSo(t *testing.T) {
	t.Parallel()
	got, err := replyfile.Judge(context.Background(), []string{"-"}, strings.NewReader(`{"b": 2, "a": 1}`), nil, 100)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "-", got[0].File)
	assert.Empty(t, got[0].Flag)

	dir := t.TempDir()
	var names []string
	for i, text := range []string{`{"a": 1, "b": 2}`, "{\"b\":2,\n \"a\":1.0}", "", `{"a": 2}`} {
		name := filepath.Join(dir, string(rune('p'+i))+".txt")
		require.NoError(t, os.WriteFile(name, []byte(text), 0o600))
		names = append(names, name)
	}
	got, err = replyfile.Judge(context.Background(), names, nil, nil, 100)
	require.NoError(t, err)
	require.Len(t, got, 4)
	assert.Equal(t, got[0].Key, got[1].Key, "key order, white space and 1 against 1.0 vote together")
	assert.NotEqual(t, got[0].Key, got[3].Key)
	assert.Equal(t, "empty", got[2].Flag)
	assert.True(t, got[0].Estimated, "a text file gives no token count: it is estimated")

	var out bytes.Buffer
	replyfile.WriteText(&out, got, 100)
	text := out.String()
	assert.Contains(t, text, "vote together (key "+got[0].Key+"): "+names[0]+", "+names[1]+"\n")
	assert.Contains(t, text, names[2]+`: red flag "empty"`)
	assert.Contains(t, text, "(~")
	assert.True(t, strings.HasSuffix(text, "4 replies: 2 distinct answers, 1 red-flagged\n"), text)
	assert.False(t, errors.Is(err, replyfile.ErrUnreadable))
}
