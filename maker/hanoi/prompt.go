package hanoi

import (
	"fmt"
	"sync/atomic"

	"github.com/tmc/langchaingo/llms"
)

// The lines of a step prompt that carry the step's data. The Oracle reads
// the last line starting with each.
const (
	PreviousMovePrefix = "Previous move: "
	CurrentStatePrefix = "Current state: "
)

// NoPreviousMove is what the "Previous move" line says at the first step.
const NoPreviousMove = "none (this is the first move)"

// SystemPrompt is the system message of every step, after the paper's: the
// puzzle, its rules, the goal, an example, and the exact answer format.
const SystemPrompt = `You are a helpful assistant. Solve this puzzle for me.

There are three pegs and n disks of different sizes stacked on the first peg. The disks are numbered from 1 (smallest) to n (largest). Disk moves in this puzzle must follow these rules:
1. Only one disk can be moved at a time.
2. Each move takes the upper disk from one stack and places it on top of another stack.
3. A larger disk may not be placed on top of a smaller disk.
The goal is to move the entire stack to the third peg.

Example: with 3 disks numbered 1 (smallest), 2, and 3 (largest), the initial state is [[3, 2, 1], [], []], and a solution is:
moves = [[1, 0, 2], [2, 0, 1], [1, 2, 1], [3, 0, 2], [1, 1, 0], [2, 1, 2], [1, 0, 2]]
This means: move disk 1 from peg 0 to peg 2, then move disk 2 from peg 0 to peg 1, and so on.

Requirements:
- The pegs are numbered from 0 (the leftmost peg is 0).
- A state lists the disks on each of the three pegs from bottom to top.
- Your answer must include the single next move in this EXACT FORMAT:
move = [disk id, from peg, to peg]
- Your answer must include the state that results from applying that move to the current state, in this EXACT FORMAT:
next_state = [[...], [...], [...]]
- A JSON object with exactly these two keys is accepted too: {"move": [disk id, from peg, to peg], "next_state": [[...], [...], [...]]}`

// cycle names the peg cycle of disk 1 with n disks.
func cycle(n int) string {
	if Direction(n) == 1 {
		return "0 -> 1 -> 2 -> 0"
	}
	return "0 -> 2 -> 1 -> 0"
}

// promptHead returns the part of a user prompt with n disks before its
// step data: the rules and the procedure, the same at every step; built
// once per number of disks.
func promptHead(n int) string {
	if n >= 0 && n < len(promptHeads) {
		if h := promptHeads[n].Load(); h != nil {
			return *h
		}
	}
	h := fmt.Sprintf(`Rules:
- Only one disk can be moved at a time.
- Only the top disk of a peg can be moved.
- A larger disk may not be placed on top of a smaller disk.

There are %d disks. For every move, follow the standard Tower of Hanoi procedure:
- If the previous move did not move disk 1, move disk 1 one peg along the cycle %s.
- If the previous move did move disk 1, make the only legal move that does not involve disk 1.
Use these clear steps to find the next move given the previous move and the current state.

`, n, cycle(n))
	if n >= 0 && n < len(promptHeads) {
		promptHeads[n].Store(&h)
	}
	return h
}

var promptHeads [MaxDisks + 1]atomic.Pointer[string]

// promptTail is the last line of every user prompt.
const promptTail = "Based on the previous move and the current state, find the single next move that follows the procedure, and the resulting next state."

// UserPrompt returns the user message of the step in state s after the
// move prev (nil at the first step), with n disks: the rules, the
// iterative procedure (disk 1's direction depends on n's parity), the
// previous move and the current state. It does not validate s. Cost: O(n),
// one allocation.
func UserPrompt(n int, s State, prev *Move) string {
	var scratch [512]byte // the step data: on the stack up to about 100 disks' text
	data := append(scratch[:0], PreviousMovePrefix...)
	if prev != nil {
		data = prev.appendText(data)
	} else {
		data = append(data, NoPreviousMove...)
	}
	data = append(data, "\n"+CurrentStatePrefix...)
	data = s.appendText(data)
	data = append(data, "\n\n"...)
	return promptHead(n) + string(data) + promptTail // one allocation: the conversion is not copied
}

// Messages returns the step's messages: [SystemPrompt] as a system message
// and [UserPrompt] as a human one. Cost: O(n).
func Messages(n int, s State, prev *Move) []llms.MessageContent {
	return []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, SystemPrompt),
		llms.TextParts(llms.ChatMessageTypeHuman, UserPrompt(n, s, prev)),
	}
}
