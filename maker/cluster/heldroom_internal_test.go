package cluster

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestARoomTrimsPullsToWhatIsLeft: an identity's pulls together reserve
// at most its room (its declared places plus maxPull) less the jobs it
// holds; its connections (identities of one key) share it, and what a
// pull gives back is room again.
func TestARoomTrimsPullsToWhatIsLeft(t *testing.T) {
	t.Parallel()
	var r rooms
	t0 := time.Now()
	assert.Equal(t, maxPull, r.reserve("K.c1", maxPull, 4, t0))
	assert.Equal(t, 4, r.reserve("K.c1", maxPull, 4, t0), "the rest of its room")
	assert.Zero(t, r.reserve("K.c1", 1, 4, t0), "its room is taken")
	assert.Equal(t, 2, r.reserve("K.c2", 8, 2, t0), "another connection of the key adds its places to the key's room")
	assert.Equal(t, 1, r.reserve("L", 1, 4, t0), "another key has a room of its own")
	require.True(t, r.hold("K.c1", "h1", "", 1, 10*time.Second, t0))
	r.unreserve("K.c1", 3)
	assert.Equal(t, 3, r.reserve("K.c2", 8, 2, t0), "a held job still counts; what the pull gave back does not")
	assert.Zero(t, r.refit("K.c2", 3, t0.Add(pullerIdle+time.Second)), "the declarations lapsed: the room is maxPull, and the pull keeps none past it")
}

// TestARoomHalvesAsJobsTimeOutAndOpensAgain: each held job whose ack
// wait passes halves the room (from the jobs held, when fewer), down to
// none; a room at none opens to one job after twice the ack wait, and
// twice as long after each zero that follows; jobs acknowledged in time
// double it back to the whole.
func TestARoomHalvesAsJobsTimeOutAndOpensAgain(t *testing.T) {
	t.Parallel()
	const wait = 10 * time.Second
	r := rooms{ackWait: wait}
	t0 := time.Now()
	require.Equal(t, 4, r.reserve("K", 4, 4, t0))
	for i := range 4 {
		require.True(t, r.hold("K", string(rune('a'+i)), "", uint64(i), wait, t0))
	}
	at := t0.Add(wait)
	assert.Zero(t, r.reserve("K", 4, 4, at), "four jobs timed out: 2, 1, 0")
	assert.Zero(t, r.reserve("K", 4, 4, at.Add(2*wait-time.Millisecond)), "none until twice the ack wait")
	at = at.Add(2 * wait)
	require.Equal(t, 1, r.reserve("K", 4, 4, at), "one job, on probation")
	require.True(t, r.hold("K", "e", "", 5, wait, at))
	at = at.Add(wait)
	assert.Zero(t, r.reserve("K", 4, 4, at.Add(4*wait-time.Millisecond)), "timed out again: four times the ack wait")
	at = at.Add(4 * wait)
	require.Equal(t, 1, r.reserve("K", 4, 4, at))
	require.True(t, r.hold("K", "f", "", 6, wait, at))
	r.done("K", "f", true, at.Add(time.Second))
	assert.Equal(t, 2, r.reserve("K", 4, 4, at.Add(time.Second)), "an acknowledgement doubles it")
	r.unreserve("K", 2)
	for i := range 7 { // 4, 8, 16, 32, 64, 128, 256
		at = at.Add(time.Second)
		require.Equal(t, 1, r.reserve("K", 1, 4, at))
		require.True(t, r.hold("K", "g", "", uint64(7+i), wait, at))
		r.done("K", "g", true, at)
	}
	assert.Equal(t, 256, r.reserve("K", 4+maxPull, 4, at))
	r.unreserve("K", 256)
	require.Equal(t, 1, r.reserve("K", 1, 4, at))
	require.True(t, r.hold("K", "g", "", 14, wait, at))
	r.done("K", "g", true, at)
	assert.Equal(t, 4+maxPull, r.reserve("K", 4+maxPull, 4, at), "doubled back to the whole")
}

// TestARedeliveryOfAHeldJobIsItsTimeout: the job an identity holds,
// redelivered (its ack wait passed on the server, a moment before the
// agent's clock says so), is refused to that identity, whose room fell.
func TestARedeliveryOfAHeldJobIsItsTimeout(t *testing.T) {
	t.Parallel()
	r := rooms{}
	t0 := time.Now()
	require.Equal(t, 2, r.reserve("K", 2, 1, t0))
	require.True(t, r.hold("K", "a", "", 7, 10*time.Second, t0))
	assert.False(t, r.hold("K", "b", "", 7, 10*time.Second, t0.Add(10*time.Second-time.Millisecond)), "its own job back: room none")
}

// TestSittingThenHandingBackIsTimingOut: a job handed back after over
// two thirds of its ack wait without word counts as timed out (a worker
// must not sit on jobs and hand each back just in time); one reported
// on, or handed back early, does not.
func TestSittingThenHandingBackIsTimingOut(t *testing.T) {
	t.Parallel()
	const wait = 9 * time.Second
	r := rooms{}
	t0 := time.Now()
	require.Equal(t, 2, r.reserve("K", 2, 1, t0))
	require.True(t, r.hold("K", "early", "", 1, wait, t0))
	require.True(t, r.hold("K", "reported", "", 2, wait, t0))
	r.done("K", "early", false, t0.Add(time.Second))
	r.progress("K", "reported", t0.Add(5*time.Second))
	r.done("K", "reported", false, t0.Add(8*time.Second))
	assert.Equal(t, 1+maxPull, r.reserve("K", 1+maxPull, 1, t0.Add(8*time.Second)), "the whole room")
	r.unreserve("K", 1+maxPull)
	require.True(t, r.reserve("K", 1, 1, t0.Add(8*time.Second)) == 1 && r.hold("K", "sat", "", 3, wait, t0.Add(8*time.Second)))
	r.done("K", "sat", false, t0.Add(15*time.Second))
	assert.Zero(t, r.reserve("K", 1, 1, t0.Add(15*time.Second)), "handed back at 7 s of 9")
}

// TestAnAnsweringIdentityKeepsARoomOfOne: a job that times out while
// its identity acts in time on others (lost on its way, or late under
// load) leaves it one job at least, never none.
func TestAnAnsweringIdentityKeepsARoomOfOne(t *testing.T) {
	t.Parallel()
	const wait = 10 * time.Second
	r := rooms{}
	t0 := time.Now()
	require.Equal(t, 2, r.reserve("K", 2, 1, t0))
	require.True(t, r.hold("K", "lost", "", 1, wait, t0))
	require.True(t, r.hold("K", "done", "", 2, wait, t0))
	r.done("K", "done", true, t0.Add(time.Second))
	assert.Equal(t, 1, r.reserve("K", 2, 1, t0.Add(wait)), "one, not none")
}

// TestALateActReopensARoomOnce: an act on a job that timed out
// (a worker whose acts were held up past the ack wait) opens a room at
// zero to one job at once, the first time until its next answer only:
// a sitter acting late on purpose gains one job.
func TestALateActReopensARoomOnce(t *testing.T) {
	t.Parallel()
	const wait = 10 * time.Second
	r := rooms{ackWait: wait}
	t0 := time.Now()
	require.Equal(t, 1, r.reserve("K", 1, 1, t0))
	require.True(t, r.hold("K", "a", "", 1, wait, t0))
	at := t0.Add(wait)
	require.Zero(t, r.reserve("K", 1, 1, at))
	r.done("K", "a", true, at.Add(time.Second))
	require.Equal(t, 1, r.reserve("K", 1, 1, at.Add(time.Second)), "late, not sitting: one job")
	require.True(t, r.hold("K", "b", "", 2, wait, at.Add(time.Second)))
	at = at.Add(time.Second + wait)
	require.Zero(t, r.reserve("K", 1, 1, at))
	r.progress("K", "b", at.Add(time.Second))
	assert.Zero(t, r.reserve("K", 1, 1, at.Add(time.Second)), "a second late act in a row opens nothing")
}

// TestIdleRoomsAreForgotten: an untightened room idle past the idle
// time is forgotten; a tightened one is kept roomIdle.
func TestIdleRoomsAreForgotten(t *testing.T) {
	t.Parallel()
	r := rooms{}
	t0 := time.Now()
	r.unreserve("K", r.reserve("K", 1, 1, t0))
	require.Equal(t, 1, r.reserve("L", 1, 1, t0))
	require.True(t, r.hold("L", "a", "", 1, time.Second, t0))
	r.prune(time.Minute, t0.Add(2*time.Minute))
	assert.NotContains(t, r.by, "K")
	assert.Contains(t, r.by, "L", "timed out: kept")
	r.prune(time.Minute, t0.Add(2*time.Hour))
	assert.NotContains(t, r.by, "L")
}

// TestACutOfTheAgentsConnectionIsNoStrike: jobs held when the agent's
// own connection was cut time out with no strike (their workers' acts
// may have found no agent: CI34's node killed under the agent had every
// honest room at zero); a job delivered after the cut is struck as any.
func TestACutOfTheAgentsConnectionIsNoStrike(t *testing.T) {
	t.Parallel()
	const wait = 10 * time.Second
	var cuts atomic.Uint64
	r := rooms{ackWait: wait, cuts: cuts.Load}
	t0 := time.Now()
	require.Equal(t, 4, r.reserve("K", 4, 4, t0))
	for i := range 4 {
		require.True(t, r.hold("K", string(rune('a'+i)), "p", uint64(i), wait, t0))
	}
	cuts.Add(1)
	at := t0.Add(wait)
	assert.Equal(t, 4+maxPull, r.reserve("K", 4+maxPull, 4, at), "the whole room: none of the four struck")
	r.unreserve("K", 4+maxPull)
	require.Equal(t, 1, r.reserve("K", 1, 4, at))
	require.True(t, r.hold("K", "e", "p", 5, wait, at))
	assert.Equal(t, 0, r.reserve("K", 1, 4, at.Add(wait)), "a job delivered after the cut is struck: half of one")
}

// TestALostPullsJobsAreHandedBackWithNoStrike: a worker's lost act on
// its pull drops that pull's jobs but those it kept, with no strike; a
// lost act names no other pull's jobs, nor another identity's, and an
// agent holding no job of the pull says so (the act goes to its peers).
func TestALostPullsJobsAreHandedBackWithNoStrike(t *testing.T) {
	t.Parallel()
	const wait = 10 * time.Second
	r := rooms{ackWait: wait}
	t0 := time.Now()
	require.Equal(t, 4, r.reserve("K", 4, 4, t0))
	require.True(t, r.hold("K", "kept", "p", 1, wait, t0))
	require.True(t, r.hold("K", "lost1", "p", 2, wait, t0))
	require.True(t, r.hold("K", "lost2", "p", 3, wait, t0))
	require.True(t, r.hold("K", "other", "q", 4, wait, t0))
	gone, found := r.lost("L", "p", nil, t0)
	assert.True(t, len(gone) == 0 && !found, "another identity's pull of the same name")
	gone, found = r.lost("K", "", nil, t0)
	assert.True(t, len(gone) == 0 && !found, "a pull named by no one")
	assert.False(t, r.delivered("K", "z"), "a pull of no job here: another agent's, perhaps")
	assert.True(t, r.delivered("K", "p"))
	gone, found = r.lost("K", "p", []string{"kept"}, t0)
	assert.True(t, found)
	assert.ElementsMatch(t, []string{"lost1", "lost2"}, gone)
	r.done("K", "kept", true, t0.Add(time.Second))
	r.done("K", "other", true, t0.Add(time.Second))
	assert.Equal(t, 4+maxPull, r.reserve("K", 4+maxPull, 4, t0.Add(2*wait)), "the whole room: the lost jobs were no strike")
}

// TestAWithdrawnJobTimesOutWhateverItsProgress: a job its coordinator
// withdrew is struck an ack wait after the withdrawal even while its
// worker reports progress on it (a sitter's way to keep its room);
// one its worker terminates at once costs nothing.
func TestAWithdrawnJobTimesOutWhateverItsProgress(t *testing.T) {
	t.Parallel()
	const wait = 9 * time.Second
	r := rooms{ackWait: wait}
	t0 := time.Now()
	require.Equal(t, 2, r.reserve("K", 2, 1, t0))
	require.True(t, r.hold("K", "sat", "p", 1, wait, t0))
	require.True(t, r.hold("K", "dropped", "p", 2, wait, t0))
	r.withdrawn(1, t0.Add(time.Second))
	r.withdrawn(2, t0.Add(time.Second))
	r.done("K", "dropped", false, t0.Add(time.Second+time.Millisecond))
	for at := 3 * time.Second; at < 12*time.Second; at += 3 * time.Second {
		r.progress("K", "sat", t0.Add(at))
	}
	assert.Equal(t, maxPull, r.reserve("K", 1+maxPull, 1, t0.Add(wait)), "not yet an ack wait since the withdrawal: the whole room but the job held")
	r.unreserve("K", maxPull)
	assert.Zero(t, r.reserve("K", 1, 1, t0.Add(time.Second+wait)), "an ack wait since the withdrawal: struck, though reported on, and none left")
	r.withdrawn(99, t0) // a job no one holds: nothing
}
