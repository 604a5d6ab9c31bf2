package cluster_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/mdap-go/mdap/maker/journal"
	"github.com/mdap-go/mdap/vote"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bumpAfter changes the first digit after the first match of re in line
// to another digit.
func bumpAfter(t *testing.T, line, re string) string {
	t.Helper()
	loc := regexp.MustCompile(re).FindStringIndex(line)
	require.NotNil(t, loc, "%s in %s", re, line)
	b := []byte(line)
	for i := loc[1]; i < len(b); i++ {
		if b[i] >= '0' && b[i] <= '9' {
			b[i] = '0' + (b[i]-'0'+1)%10
			return string(b)
		}
	}
	t.Fatalf("no digit after %s in %s", re, line)
	return ""
}

// rechain recomputes every line's "chain" field with plain SHA-256, as a
// forger who knows the format but not the key does (issue 35 case 7).
func rechain(lines []string) []string {
	var prev [32]byte
	out := make([]string, len(lines))
	for i, l := range lines {
		body := l[:strings.LastIndex(l, `,"chain":"`)]
		prev = sha256.Sum256(append(prev[:], body...))
		out[i] = body + `,"chain":"` + hex.EncodeToString(prev[:]) + `"}`
	}
	return out
}

// TestJetStreamJournalEditTable is the journal edit table on the engine:
// a client with access to the journal's stream purges it and republishes
// it edited (as the attack that found #20 did). Every edit either
// reproduces the undisturbed run's result or is refused: as corruption
// naming the first bad line, or (the journal cut short of its recorded
// chain head, signed journals being the default) as a rollback.
func TestJetStreamJournalEditTable(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ctx := context.Background()
	_, js := connect(t, srv.ClientURL())
	cfg := vote.Config{K: 3, Parallel: 3}

	j, err := cluster.CreateJournal(ctx, js, "chain", cluster.JournalConfig{})
	require.NoError(t, err)
	j.CheckpointEvery = 5
	task, err := hanoi.New(4)
	require.NoError(t, err)
	want, err := (&maker.Solver{Config: maker.Config{Vote: cfg}, Model: simModel(t, 5), Journal: j}).Solve(ctx, task)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	require.True(t, task.Solved())
	var buf bytes.Buffer
	require.NoError(t, cluster.ExportJournal(ctx, js, "chain", &buf))
	orig := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, orig, 1+15+2, "header, 15 steps, checkpoints after steps 4 and 9")
	require.True(t, strings.HasPrefix(orig[6], `{"checkpoint":5`))
	require.True(t, strings.HasPrefix(orig[12], `{"checkpoint":10`))

	st, err := js.Stream(ctx, cluster.JournalsStream)
	require.NoError(t, err)
	subject := "mdap.journals.chain"
	republish := func(lines []string) {
		require.NoError(t, st.Purge(ctx, jetstream.WithPurgeSubject(subject)))
		for _, l := range lines {
			_, err := js.Publish(ctx, subject, []byte(l))
			require.NoError(t, err)
		}
	}

	at := func(i int, re string) func([]string) []string {
		return func(l []string) []string { l[i] = bumpAfter(t, l[i], re); return l }
	}
	cases := []struct {
		name string
		edit func([]string) []string
		line int // the first bad line (from 1); 0: the original result; -1: a rollback
	}{
		{"a winner changed", at(2, `"winner":`), 3},
		{"a winner changed after the last checkpoint", at(15, `"winner":`), 16},
		{"a vote changed", at(4, `"votes":\{"[0-9a-f]+":`), 5},
		{"a count changed (launched)", at(9, `"launched":`), 10},
		{"a count changed (valid)", at(14, `"valid":`), 15},
		{"a count changed (errors)", at(3, `"errors":`), 4},
		{"tokens changed", at(16, `"output_tokens":`), 17},
		{"a checkpoint's state changed", at(12, `"task_state":`), 13},
		{"a checkpoint's report changed", at(12, `"report":\{"steps":`), 13},
		{"a byte flipped", func(l []string) []string { b := []byte(l[8]); b[len(b)/2] ^= 1; l[8] = string(b); return l }, 9},
		{"a line dropped", func(l []string) []string { return append(l[:7:7], l[8:]...) }, 8},
		{"a line duplicated", func(l []string) []string { return append(l[:11:11], l[10:]...) }, 12},
		{"the header's settings changed", at(0, `"k":`), 1},
		{"a winner changed, the chain recomputed", func(l []string) []string { return rechain(at(2, `"winner":`)(l)) }, 1},
		{"the last line dropped", func(l []string) []string { return l[:len(l)-1] }, -1},
		{"cut back to a checkpoint", func(l []string) []string { return l[:7] }, -1},
		{"unchanged", func(l []string) []string { return l }, 0},
	}
	for _, c := range cases {
		republish(c.edit(append([]string(nil), orig...)))
		j, err := cluster.OpenJournal(ctx, js, "chain", cluster.JournalConfig{})
		if err == nil {
			task, terr := hanoi.New(4)
			require.NoError(t, terr)
			var rep maker.Report
			rep, err = (&maker.Solver{Config: maker.Config{Vote: cfg}, Model: simModel(t, 5), Journal: j}).Solve(ctx, task)
			require.NoError(t, j.Close())
			if c.line == 0 {
				require.NoError(t, err, c.name)
				assert.True(t, task.Solved(), c.name)
				assert.Equal(t, want.Steps, rep.Steps, c.name)
				assert.Equal(t, want.Counts, rep.Counts, c.name)
				assert.Equal(t, want.SampleHistogram, rep.SampleHistogram, c.name)
				assert.Equal(t, want.Usage.InputTokens, rep.Usage.InputTokens, c.name)
				assert.Equal(t, want.Usage.OutputTokens, rep.Usage.OutputTokens, c.name)
				continue
			}
		}
		require.Error(t, err, c.name)
		if c.line < 0 {
			require.ErrorIs(t, err, journal.ErrRollback, c.name)
			continue
		}
		require.ErrorIs(t, err, journal.ErrCorrupt, c.name)
		assert.Contains(t, err.Error(), fmt.Sprintf("nats:chain:%d ", c.line), c.name)
	}
}
