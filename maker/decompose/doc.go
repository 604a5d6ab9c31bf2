// Package decompose solves general problems by voted decomposition, the
// general MAKER of the paper's section 5: a problem (a node) is decided
// atomic or not by an atomicity vote; a non-atomic node is split by
// decomposition agents into subproblems and a composition, voted
// first-to-ahead-by-k; its subproblems are solved the same way,
// concurrently; their answers are composed into the node's answer by a
// voted composition. An atomic node is solved by solver agents through
// mdap's step voting (a maker.Solver over a one-step maker.Task, so red
// flags, escalation and the solver's settings apply).
//
// A node is a problem of a [Family]: the family's name and a canonical
// JSON input. Proposals are voted on their canonical keys (intent.Key)
// when the family's proposals are structured; otherwise, or when
// [Settings.Discriminate] is set, the distinct proposals become candidates
// that discriminator agents pick among, each vote seeing them in a fresh
// order shuffled per (seed, node, sample), and the vote is on the picked
// candidate's identity, first-to-ahead-by-k.
//
// Every role is a prompt to an llms.Model decoded by the role's decoder;
// the simulated model plays every role through [SimModels], which knows
// the family's truth ([Truth]). Randomness is drawn per (seed, node path,
// role, sample index): results do not depend on concurrency.
//
// Every decision is journaled before it is used ([Config.Journal]); a
// tree killed at any point resumes to the same result without deciding a
// recorded decision again.
//
// [Plan] spreads a failure budget 1−T over an upper bound of the tree's
// decisions (from the depth and breadth caps) and chooses each role's k
// from that role's p with the scaling laws, so that the tree is right with
// probability at least T while each role's p holds.
//
// [StrategyFirstToK] is the authors' scheme (2K−1 candidates, a
// discriminator voting an index first-to-K, candidates in the same order
// every vote), run on the same models for comparison.
package decompose
