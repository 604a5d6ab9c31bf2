package view

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/mdap-go/mdap/maker/journal"
)

// This file is a step's race as the view shows it: the samples its record
// keeps (journal.StepRecord.Samples), each with its model, class and red
// flag, the same whether the record came from a run in process (Live) or
// from its journal (File).

// MaxRaceSamples is the most samples of one step the view shows for its
// race; a step's record counts those past it in more_samples.
const MaxRaceSamples = 64

// Sample is one sample of a step's race. It holds no text of the reply
// and no provider error message: only its class.
type Sample struct {
	// Index is the sample's number in the step's races, from 0 (the order
	// it was launched); the samples are listed in that order, the order
	// the race counted them in.
	Index int `json:"index"`
	// Model is the identity of the model that drew it; Worker the
	// engine's worker identity that did, when the model is remote.
	Model  string `json:"model"`
	Worker string `json:"worker,omitempty"`
	// Class is the vote key (hex, as the record's votes) of the class the
	// sample voted for; Key its own key when a matcher beyond bytes put
	// it in a class of another key. Class is "red flag" when the sample
	// was red-flagged (Flag says why), "error" when the provider call
	// failed and "cancelled" when it was drawn but not counted.
	Class string `json:"class"`
	Key   string `json:"key,omitempty"`
	Flag  string `json:"flag,omitempty"`
	// Winner marks a vote for the step's winning answer.
	Winner       bool          `json:"winner,omitempty"`
	InputTokens  int           `json:"input_tokens"`
	OutputTokens int           `json:"output_tokens"`
	Latency      time.Duration `json:"latency_ns"`
}

// Sample classes besides a vote key.
const (
	ClassFlagged   = "red flag"
	ClassError     = "error"
	ClassCancelled = "cancelled"
)

// raceRecord is a step's record as the view answers it: the journal's
// record and the race's samples.
type raceRecord struct {
	*journal.StepRecord
	Samples     []Sample `json:"samples"`
	MoreSamples int      `json:"more_samples,omitempty"`
}

// raceOf returns the race of rec as the view shows it: its first
// MaxRaceSamples samples, each with its model (models[Index mod
// len(models)], the run's members), and how many more the step drew. Nil
// when the record keeps no samples (a journal of version 4 or before).
func raceOf(rec *journal.StepRecord, models []string) ([]Sample, int) {
	if len(rec.Samples) == 0 {
		return nil, rec.MoreSamples
	}
	n := min(len(rec.Samples), MaxRaceSamples)
	out := make([]Sample, n)
	for i, s := range rec.Samples[:n] {
		x := Sample{Index: s.Index, Worker: s.Worker, Key: s.Key, InputTokens: s.InputTokens,
			OutputTokens: s.OutputTokens, Latency: s.Latency}
		switch {
		case s.Model != "":
			x.Model = s.Model
		case len(models) > 0 && s.Index >= 0: // a crafted line's negative index names none
			x.Model = models[s.Index%len(models)]
		}
		switch {
		case s.Cancelled:
			x.Class = ClassCancelled
		case s.Error:
			x.Class = ClassError
		case s.Flag != "":
			x.Class, x.Flag = ClassFlagged, s.Flag
		default:
			x.Class = cmp.Or(s.Class, rec.Key) // "" is a vote for the winner
			x.Winner = x.Class == rec.Key
		}
		out[i] = x
	}
	return out, len(rec.Samples) - n + rec.MoreSamples
}

// lostWorkers returns the worker of each sample of rec that voted for an
// answer that lost.
func lostWorkers(rec *journal.StepRecord) []string {
	var lost []string
	for _, s := range rec.Samples {
		if s.Voted() && cmp.Or(s.Class, rec.Key) != rec.Key {
			lost = append(lost, s.Worker)
		}
	}
	return lost
}

// raceLine returns a journal's step line (its chain removed) as the view
// answers it: the record's fields, its samples replaced by the race
// (raceOf), with models the journal's members.
func raceLine(line []byte, models []string) ([]byte, error) {
	var rec journal.StepRecord
	var out bytes.Buffer
	out.WriteByte('{')
	err := walkObject(line, func(key, val []byte) error {
		switch string(key) {
		case "samples":
			return json.Unmarshal(val, &rec.Samples)
		case "more_samples":
			return json.Unmarshal(val, &rec.MoreSamples)
		case "key":
			if err := json.Unmarshal(val, &rec.Key); err != nil {
				return err
			}
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		out.WriteByte('"')
		out.Write(key)
		out.WriteString(`":`)
		out.Write(val)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: a step record that does not parse: %w", ErrNotJournal, err)
	}
	samples, more := raceOf(&rec, models)
	b, err := json.Marshal(samples)
	if err != nil {
		return nil, err
	}
	if out.Len() > 1 {
		out.WriteByte(',')
	}
	out.WriteString(`"samples":`)
	out.Write(b)
	if more > 0 {
		out.WriteString(`,"more_samples":`)
		out.WriteString(strconv.Itoa(more))
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}
