package journal

import "time"

// SampleRecord is one sample of a step as the step's record keeps it
// (StepRecord.Samples; journal format version 5 on): enough to show the
// step's race, sample by sample, from the journal alone. It holds no text
// of the reply and no provider error message.
//
// The model that drew a sample is Model when set (an escalated race's
// model, EscalateModel), else the run's model, or, for an ensemble,
// member Index mod the number of members (the journal header's members,
// in order), as SampleEvent.Model names it.
type SampleRecord struct {
	// Index is the sample's index in the step (SampleID.Index); a second
	// race of the step (escalation, a stricter vote on a write) numbers
	// on from the first's.
	Index int `json:"i"`
	// Worker is the engine worker that drew it over NATS; "" in process.
	Worker string `json:"worker,omitempty"`
	// Model is the identity of the model that drew it when that is not
	// one of the run's: the escalation model's member (EscalateModel).
	Model string `json:"model,omitempty"`
	// Class is the vote key (hex, as StepRecord.Votes names it) of the
	// class the sample voted for, when it voted for another class than
	// the step's winner; "" for a vote for the winner (StepRecord.Key:
	// most samples, so it is left out to keep the journal small), and
	// when the sample did not vote (Flag, Error or Cancelled say why).
	// Under a matcher beyond bytes (a number tolerance, an embedding, a
	// judge) it is the class the sample joined, which is the key of that
	// class's first member; Key is then the sample's own key, when it
	// differs from its class's.
	Class string `json:"class,omitempty"`
	Key   string `json:"key,omitempty"`
	// Flag is why the sample was red-flagged (at most MaxFlagReason
	// bytes); Error marks a failed draw (the provider's message is not
	// kept); Cancelled a sample drawn but never counted: in flight, or past
	// the deciding index, when its race ended.
	Flag      string `json:"flag,omitempty"`
	Error     bool   `json:"error,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	// InputTokens, OutputTokens and Latency are what the sample cost.
	InputTokens  int           `json:"in"`
	OutputTokens int           `json:"out"`
	Latency      time.Duration `json:"ns"`
}

// MaxFlagReason is the longest red-flag reason a SampleRecord keeps, in
// bytes; a longer one is cut at a rune boundary and ends with "…".
const MaxFlagReason = 200

// MaxRecordedSamples is the most samples of one step its record keeps
// (the first, by index); StepRecord.MoreSamples counts the rest. It
// bounds a journal line: a step whose budget is unbounded (escalation's
// raise-k) keeps its samples in at most about 120 KB over NATS (a
// worker's 56-character key each), 350 KB when every one is red-flagged
// with a reason of 200 bytes: under NATS's 1 MiB message.
const MaxRecordedSamples = 1024

// Voted reports whether the sample voted (it has a class).
func (s SampleRecord) Voted() bool { return !s.Cancelled && !s.Error && s.Flag == "" }
