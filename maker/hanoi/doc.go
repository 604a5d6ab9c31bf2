// Package hanoi is Towers of Hanoi as a built-in mdap task, as in the
// MAKER paper (Meyerson et al., 2025): n disks, numbered 1 (smallest) to n
// (largest), start on peg 0 and must end on peg 2, pegs numbered 0, 1, 2.
// A state lists each peg from bottom to top, as the paper does: with three
// disks the start is [[3, 2, 1], [], []].
//
// One step is one move. Each step's microagent gets the paper's prompt
// ([SystemPrompt], [UserPrompt]): the rules, the iterative procedure (if
// the previous move did not move disk 1, move disk 1 one peg along its
// cycle, 0 → 1 → 2 for an even n and 0 → 2 → 1 for an odd n; otherwise make
// the only legal move that does not involve disk 1), the previous move and
// the current state. It answers in the paper's format,
//
//	move = [disk, from, to]
//	next_state = [[...], [...], [...]]
//
// or with the JSON object {"move": [...], "next_state": [...]}. Replies in
// any other shape are red-flagged by [ParseReply], which checks the format
// only, as the paper does: which move is right is voting's business.
//
// [Task] is the task's state machine (and, through its Prompt, Decode and
// Apply methods, a maker.Task); [Oracle] answers its prompts for the
// simulated model of package maker/sim; [CorrectMove] and [Moves] are the
// iterative rule for other callers. With n = 20, the paper's run, a task
// takes 1,048,575 steps in O(n) memory.
//
// A step's answer, as the solver hands it to Apply, Progress and the
// Observer, is an intent.Output whose Value is an [Answer] (what
// [Task.DecodeKey] returns), not a map[string]any: read its fields, or
// decode it with intent.Output.DecodeValue, which reads an Answer and its
// map alike. Its JSON, its vote key and the journal's line are the map's
// (Answer.MarshalJSON).
package hanoi
