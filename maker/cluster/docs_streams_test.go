package cluster_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsListTheProvisionedStreams: docs/nats.md's table of streams and
// buckets is what Provision makes, row for row: every stream, its
// subjects, storage, retention, max bytes, discard policy, messages per
// subject, max age and deny-delete.
func TestDocsListTheProvisionedStreams(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/nats.md")
	require.NoError(t, err)
	doc := string(b)
	_, table, ok := strings.Cut(doc, "### Streams and buckets")
	require.True(t, ok, "docs/nats.md has a section Streams and buckets")
	_, table, ok = strings.Cut(table, "| stream | subjects | storage | retention | max bytes | discard | per subject | max age | deny delete |")
	require.True(t, ok, "the section has the table")

	srv := startServer(t)
	_, js := connect(t, srv.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, cluster.Provision(ctx, js, cluster.ProvisionConfig{}))
	var made []string
	names := js.StreamNames(ctx)
	for n := range names.Name() {
		made = append(made, n)
	}
	require.NoError(t, names.Err())

	tick := regexp.MustCompile("`([^`]+)`")
	placeholder := regexp.MustCompile(`<[a-z]+>`)
	var listed []string
	for _, line := range strings.Split(table, "\n")[2:] {
		if !strings.HasPrefix(line, "| `") {
			break
		}
		cols := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cols {
			cols[i] = strings.TrimSpace(cols[i])
		}
		require.Len(t, cols, 9, line)
		name := tick.FindStringSubmatch(cols[0])[1]
		listed = append(listed, name)
		st, err := js.Stream(ctx, name)
		require.NoError(t, err, name)
		c := st.CachedInfo().Config
		for _, m := range tick.FindAllStringSubmatch(cols[1], -1) {
			subject := placeholder.ReplaceAllString(m[1], "x")
			assert.True(t, slices.ContainsFunc(c.Subjects, func(f string) bool { return subjectMatches(f, subject) }), "%s: %s is not among its subjects %v", name, m[1], c.Subjects)
		}
		assert.Equal(t, cols[2], map[jetstream.StorageType]string{jetstream.FileStorage: "file", jetstream.MemoryStorage: "memory"}[c.Storage], "%s storage", name)
		assert.Equal(t, cols[3], map[jetstream.RetentionPolicy]string{jetstream.LimitsPolicy: "limits", jetstream.WorkQueuePolicy: "work queue", jetstream.InterestPolicy: "interest"}[c.Retention], "%s retention", name)
		assert.Equal(t, cols[4], bytesText(c.MaxBytes), "%s max bytes", name)
		assert.Equal(t, cols[5], map[jetstream.DiscardPolicy]string{jetstream.DiscardNew: "new", jetstream.DiscardOld: "old"}[c.Discard], "%s discard", name)
		perSubject := "—"
		if c.MaxMsgsPerSubject > 0 {
			perSubject = strconv.FormatInt(c.MaxMsgsPerSubject, 10)
		}
		assert.Equal(t, cols[6], perSubject, "%s per subject", name)
		if c.MaxMsgsPerSubject > 0 && c.Discard == jetstream.DiscardNew && !strings.HasPrefix(name, "KV_") {
			assert.True(t, c.DiscardNewPerSubject, "%s discards new per subject", name)
		}
		age, err := time.ParseDuration(cols[7])
		require.NoError(t, err, name)
		assert.Equal(t, age, c.MaxAge, "%s max age", name)
		assert.Equal(t, cols[8], map[bool]string{true: "yes", false: "no"}[c.DenyDelete], "%s deny delete", name)
		assert.Equal(t, 1, c.Replicas, "%s: the engine's replicas", name)
	}
	slices.Sort(made)
	slices.Sort(listed)
	assert.Equal(t, made, listed, "the table lists every stream Provision makes, and no other")
}

// bytesText writes a stream's max bytes as the table does: 256 MiB, 8 GiB,
// or — for no bound.
func bytesText(n int64) string {
	switch {
	case n <= 0:
		return "—"
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10)
}

// subjectMatches reports whether the literal subject matches the filter
// (tokens, * one, > the rest).
func subjectMatches(filter, subject string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, tok := range f {
		switch {
		case tok == ">":
			return len(s) > i
		case i >= len(s):
			return false
		case tok != "*" && tok != s[i]:
			return false
		}
	}
	return len(f) == len(s)
}
