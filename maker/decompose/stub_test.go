package decompose

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// numFamily is a test family: the sum of a list of small integers, split
// in halves, composed by addition. Answers are JSON integers.
type numFamily struct{}

func (numFamily) Name() string { return "sum" }
func (numFamily) Canon(raw json.RawMessage) (json.RawMessage, error) {
	var in struct {
		N []int `json:"n"`
	}
	if err := json.Unmarshal(raw, &in); err != nil || len(in.N) == 0 {
		return nil, fmt.Errorf("want {\"n\": [INTS]}")
	}
	return json.Marshal(in)
}
func (numFamily) CanonAnswer(_, a json.RawMessage) (json.RawMessage, error) {
	var n int
	if err := json.Unmarshal(a, &n); err != nil {
		return nil, err
	}
	return []byte(strconv.Itoa(n)), nil
}
func (numFamily) Indivisible(raw json.RawMessage) bool { return len(raw) < 12 }
func (numFamily) Structured() bool                     { return true }
func (numFamily) Prompts() Prompts                     { return Prompts{Solve: "Add the numbers."} }
