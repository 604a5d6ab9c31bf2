package maker

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"

	"github.com/mdap-go/mdap/intent"
)

// The red flags. A reply with a red flag never votes: it is thrown away,
// counted under the flag's message, and the step is sampled again. Wrap
// ErrFormat in a Task's Decode error for a task-specific format check.
var (
	ErrEmpty       = errors.New("empty")       // no text and no tool call
	ErrOverlong    = errors.New("overlong")    // more output tokens than the cap
	ErrCutOff      = errors.New("cut off")     // the provider stopped for length, or gave no reason at exactly the cap
	ErrUnparseable = errors.New("unparseable") // no single well-formed answer
	ErrFormat      = errors.New("format")      // the task's format check refused it
	// ErrInvalidArguments: the reply proposes a call of a tool the run may
	// run, with arguments its schema refuses even after healing.
	ErrInvalidArguments = errors.New("invalid arguments")
	// ErrSelfCorrection: the reply corrects itself mid-way ("Wait,",
	// "Actually,", "I made a mistake" outside its JSON strings), when
	// FlagRules.SelfCorrection asks for the rule.
	ErrSelfCorrection = errors.New("self-correction")
)

// FlagRules says which of the reply-level red flags apply. The zero value
// applies them all, as the paper does; unparseable and format flags always
// apply, since such a reply has no answer to vote with.
type FlagRules struct {
	// AllowEmpty lets an empty reply through to Decode, which will then
	// usually flag it as unparseable.
	AllowEmpty bool `json:"allow_empty"`
	// AllowOverlong lets a reply over the token cap vote.
	AllowOverlong bool `json:"allow_overlong"`
	// AllowCutOff lets a reply the provider stopped for length vote, and
	// one of exactly the cap without a stop reason.
	AllowCutOff bool `json:"allow_cut_off"`
	// SelfCorrection flags a reply that corrects itself mid-way: outside
	// the string values of its JSON, a "Wait," or "Wait.", "Actually,",
	// "I made a mistake", "my mistake", "I was wrong", "on second
	// thought", "scratch that", "let me correct", "correction:" or
	// "oops" (any case, as words). Such a reply changed its mind once
	// and may again; the paper's red flags throw away replies whose form
	// shows confusion. Off by default (a reply that thinks aloud before
	// its answer is flagged too).
	SelfCorrection bool `json:"self_correction,omitempty"`
}

// MaxReplyBytes is the largest reply text judged at all: a longer one is
// flagged overlong whatever the rules, before anything parses it, so a
// runaway reply costs no more than its download.
const MaxReplyBytes = 1 << 20

// check returns the reply-level red flag of r under cap maxTokens, or nil.
func (f FlagRules) check(r Reply, maxTokens int) error {
	switch {
	case len(r.Text) > MaxReplyBytes:
		return ErrOverlong
	case !f.AllowEmpty && strings.TrimSpace(r.Text) == "" && len(r.ToolCalls) == 0:
		return ErrEmpty
	case !f.AllowCutOff && cutOff(r.StopReason):
		return ErrCutOff
	case !f.AllowCutOff && r.StopReason == "" && !r.Estimated && maxTokens > 0 && r.OutputTokens == maxTokens:
		// The provider gave no stop reason, and the reply is exactly the
		// cap the solver sent: it cannot be told from a cut reply.
		return ErrCutOff
	case !f.AllowOverlong && maxTokens > 0 && r.OutputTokens > maxTokens:
		return ErrOverlong
	case f.SelfCorrection && selfCorrects(r.Text):
		return ErrSelfCorrection
	}
	return nil
}

// selfCorrection matches the words of a reply that corrects itself.
var selfCorrection = regexp.MustCompile(`(?i)\b(?:wait\s*[,.!]|actually\s*,|i made a mistake|my mistake|i was wrong|on second thought|scratch that|let me correct|correction\s*:|oops)`)

// selfCorrects reports whether text, its double-quoted strings left out
// (a JSON string value may say anything), corrects itself.
func selfCorrects(text string) bool {
	var outside strings.Builder
	inString, escaped := false, false
	for _, c := range text {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
			outside.WriteByte(' ')
		case !inString:
			outside.WriteRune(c)
		}
	}
	return selfCorrection.MatchString(outside.String())
}

// cutOff reports whether a provider's stop reason means the reply was cut
// at the length limit: "length" (OpenAI and compatible servers),
// "max_tokens" (Anthropic), "MAX_TOKENS" (Google).
func cutOff(stopReason string) bool {
	s := strings.ToLower(stopReason)
	return s == "length" || s == "max_tokens"
}

// classify maps a Decode error to the red flag it counts under.
func classify(err error) error {
	if errors.Is(err, ErrFormat) {
		return ErrFormat
	}
	return ErrUnparseable
}

// DecodeReply is the task-independent part of decoding: native tool calls
// through intent.FromToolCalls, text through intent.Parse. When a reply has
// both, a structured answer in the text joins the tool call's intent; a
// different intent in the text makes the reply ambiguous, and text without
// an answer (a model's chatter around its call) is ignored. Errors are
// those of package intent.
func DecodeReply(r Reply) (intent.Output, error) {
	if len(r.ToolCalls) == 0 {
		return intent.Parse(r.Text)
	}
	out, err := intent.FromToolCalls(r.ToolCalls)
	if err != nil {
		return intent.Output{}, err
	}
	text, err := intent.Parse(r.Text)
	if err != nil {
		return out, nil
	}
	if text.Intent != nil {
		a, errA := intent.Key(intent.Output{Intent: text.Intent})
		b, errB := intent.Key(intent.Output{Intent: out.Intent})
		if errA != nil || errB != nil || a != b {
			return intent.Output{}, intent.ErrAmbiguous
		}
	}
	switch v := text.Value.(type) {
	case nil:
	case map[string]any:
		// An answer beside an intent is an object (see intent.Output); a
		// "rationale" beside a call is the call's rationale, as in a
		// reply that writes the call as text.
		if r, ok := v["rationale"]; ok {
			if s, isString := r.(string); isString && out.Intent.Rationale == "" {
				out.Intent.Rationale = s
			}
			v = maps.Clone(v)
			delete(v, "rationale")
		}
		if len(v) > 0 {
			out.Value = v
		}
	default:
		return intent.Output{}, fmt.Errorf("%w: a tool call beside a non-object answer", intent.ErrAmbiguous)
	}
	return out, nil
}
