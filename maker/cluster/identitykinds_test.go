package cluster_test

import (
	"path/filepath"
	"testing"

	"github.com/mdap-go/mdap/maker/cluster"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdentitiesIssueABudgetWithTheKeyOrAlone: a run key issued with a
// budget records it; issued again with a budget keeps its key and sets
// the budget only; a worker has no budget to set.
func TestIdentitiesIssueABudgetWithTheKeyOrAlone(t *testing.T) {
	dir := t.TempDir()
	seed, err := cluster.RunIdentities.Issue(dir, "r1", 4096)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "runs", "r1.nk"), seed)
	assert.Equal(t, int64(4096), cluster.RunKeyBytesIn(dir)("r1"))
	_, keys, err := cluster.RunIdentities.Issued(dir)
	require.NoError(t, err)

	seed, err = cluster.RunIdentities.Issue(dir, "r1", 8192)
	require.NoError(t, err)
	assert.Empty(t, seed, "the key kept")
	assert.Equal(t, int64(8192), cluster.RunKeyBytesIn(dir)("r1"))
	_, again, err := cluster.RunIdentities.Issued(dir)
	require.NoError(t, err)
	assert.Equal(t, keys, again)

	_, err = cluster.RunIdentities.Issue(dir, "r1", 0)
	require.ErrorIs(t, err, cluster.ErrConfig, "issued already, without a budget to set")
	assert.True(t, cluster.RunIdentities.Budgeted())
	assert.False(t, cluster.WorkerIdentities.Budgeted())
	_, err = cluster.WorkerIdentities.Issue(dir, "w1", 4096)
	require.ErrorIs(t, err, cluster.ErrConfig)
	_, err = cluster.WorkerIdentities.Issue(dir, "w1", 0)
	require.NoError(t, err)
	require.NoError(t, cluster.WorkerIdentities.Revoke(dir, "w1"))
	names, _, err := cluster.WorkerIdentities.Issued(dir)
	require.NoError(t, err)
	assert.Empty(t, names)
}
