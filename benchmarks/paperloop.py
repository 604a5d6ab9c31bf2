"""The paper's sequential voting loop, in Python, as the paper ran it.

This is benchmarks.ReferenceLoop (overhead.go) written as the paper's own
Python would be: call_llm sends one chat completion per sample over one
kept-alive http.client connection (the request a dict encoded by json, the
reply decoded into dicts), get_vote red-flags a reply over the token cap or
cut off, or one the parser (the same regular expressions, then json for the
lists) cannot read, and do_voting samples until one answer leads every other
by k (temperature 0 for a step's first sample, 0.1 after; each sample sends
its index plus one as the seed, as the Go loop and mdap's solver do). The
winner is applied and the next step's prompt is built from it. The standard
library only: it is the baseline issue #24's figures were measured against.

Input, one JSON object on stdin: base_url (an OpenAI-compatible /v1 URL),
model, disks, k, max_tokens, and the Hanoi prompt's fixed text handed over
by the Go side so that the prompts are byte for byte the Go loop's:
system, head (the user prompt before the step's data; it depends only on
the number of disks), tail (after it), previous_prefix, state_prefix,
no_previous. The step's data (the previous move and the current state) is
formatted here, every step, from the state this loop tracks.

Output, one JSON object on stdout: steps, samples, solved, and cpu_seconds
and wall_seconds of the loop alone (time.process_time and
time.perf_counter around it: the interpreter's start-up and imports are
not counted). An error goes to stderr with exit status 1.
"""

import http.client
import json
import re
import sys
import time
import urllib.parse

# The paper's parser: the last `move = [...]` and `next_state = [[...]]`.
MOVE = re.compile(r"(?i)move\s*=\s*(\[[^\[\]]*\])")
STATE = re.compile(
    r"(?i)next_state\s*=\s*(\[\s*\[[^\[\]]*\]\s*,\s*\[[^\[\]]*\]\s*,\s*\[[^\[\]]*\]\s*\])"
)

MAX_SAMPLES = 1000  # a step undecided after this many samples ends the run


class Floor(Exception):
    """The loop cannot go on: a step undecided, or a winner that does not apply."""


def call_llm(conn, path, model, messages, temperature, seed, max_tokens):
    body = json.dumps(
        {
            "model": model,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "seed": seed,
        }
    )
    conn.request(
        "POST",
        path,
        body,
        {"Content-Type": "application/json", "Authorization": "Bearer placeholder"},
    )
    resp = conn.getresponse()
    raw = resp.read()
    if resp.status != 200:
        raise RuntimeError("HTTP %d: %s" % (resp.status, raw[:500]))
    reply = json.loads(raw)
    choices = reply.get("choices") or []
    if not choices:
        raise RuntimeError("no choice")
    choice = choices[0]
    text = (choice.get("message") or {}).get("content") or ""
    finish = choice.get("finish_reason") or ""
    tokens = (reply.get("usage") or {}).get("completion_tokens") or 0
    return text, finish, tokens


def get_vote(text, finish, tokens, max_tokens):
    """The reply's (move, next_state), or None for a red-flagged reply."""
    if finish == "length" or tokens > max_tokens:
        return None
    moves, states = MOVE.findall(text), STATE.findall(text)
    if not moves or not states:
        return None
    try:
        move = json.loads(moves[-1])
        state = json.loads(states[-1])
    except ValueError:
        return None
    if len(move) != 3:
        return None
    try:
        vote = (tuple(move), tuple(tuple(peg) for peg in state))
        hash(vote)
    except TypeError:  # an object inside a list: no vote to count
        return None
    return vote


def do_voting(conn, path, model, messages, k, max_tokens):
    """First-to-ahead-by-k: the winning (move, next_state) and the samples drawn."""
    votes = {}
    for i in range(MAX_SAMPLES):
        temperature = 0 if i == 0 else 0.1
        text, finish, tokens = call_llm(conn, path, model, messages, temperature, i + 1, max_tokens)
        vote = get_vote(text, finish, tokens, max_tokens)
        if vote is None:
            continue
        votes[vote] = votes.get(vote, 0) + 1
        best_other = max([n for v, n in votes.items() if v != vote], default=0)
        if votes[vote] >= k + best_other:
            return vote, i + 1
    raise Floor("undecided after %d samples" % MAX_SAMPLES)


def integer(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    if isinstance(x, float) and not x.is_integer():
        return None
    return int(x)


def answer(vote, n):
    """The winner as integers, checked as hanoi.AnswerFromValue checks it."""
    move = [integer(x) for x in vote[0]]
    state = [[integer(d) for d in peg] for peg in vote[1]]
    if None in move or any(None in peg for peg in state):
        raise Floor("winner %r: not integers" % (vote,))
    disk, src, dst = move
    if not 1 <= disk <= n or not 0 <= src <= 2 or not 0 <= dst <= 2:
        raise Floor("winner %r: no such disk or peg" % (vote,))
    if len(state) != 3 or sorted(d for peg in state for d in peg) != list(range(1, n + 1)):
        raise Floor("winner %r: not a state of %d disks" % (vote, n))
    if any(peg[i - 1] < peg[i] for peg in state for i in range(1, len(peg))):
        raise Floor("winner %r: a larger disk on a smaller one" % (vote,))
    return move, state


def apply_move(state, move):
    """The state after move, or None if the rules forbid it."""
    disk, src, dst = move
    if src == dst or not state[src] or state[src][-1] != disk:
        return None
    if state[dst] and state[dst][-1] < disk:
        return None
    after = [list(peg) for peg in state]
    after[dst].append(after[src].pop())
    return after


def format_move(move):
    return "[%d, %d, %d]" % tuple(move)


def format_state(state):
    return "[" + ", ".join("[" + ", ".join(str(d) for d in peg) + "]" for peg in state) + "]"


def solve(cfg):
    url = urllib.parse.urlsplit(cfg["base_url"])
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    path = url.path.rstrip("/") + "/chat/completions"
    n, k, max_tokens = cfg["disks"], cfg["k"], cfg["max_tokens"]
    state, previous = [list(range(n, 0, -1)), [], []], None
    steps = samples = illegal = 0
    for _ in range(2**n - 1):
        user = (
            cfg["head"]
            + cfg["previous_prefix"]
            + (format_move(previous) if previous else cfg["no_previous"])
            + "\n"
            + cfg["state_prefix"]
            + format_state(state)
            + "\n\n"
            + cfg["tail"]
        )
        messages = [
            {"role": "system", "content": cfg["system"]},
            {"role": "user", "content": user},
        ]
        try:
            vote, drawn = do_voting(conn, path, cfg["model"], messages, k, max_tokens)
            move, next_state = answer(vote, n)
        except Floor as e:
            raise Floor("step %d: %s" % (steps, e)) from None
        samples += drawn
        if apply_move(state, move) != next_state:
            illegal += 1  # the winner's state is taken all the same, as the paper's run would
        state, previous = next_state, move
        steps += 1
    conn.close()
    solved = illegal == 0 and state == [[], [], list(range(n, 0, -1))]
    return steps, samples, solved


def main():
    cfg = json.load(sys.stdin)
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        steps, samples, solved = solve(cfg)
    except Exception as e:  # the Go side reads stderr
        print("paper loop: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 1
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(
        json.dumps(
            {
                "steps": steps,
                "samples": samples,
                "solved": solved,
                "cpu_seconds": cpu,
                "wall_seconds": wall,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
