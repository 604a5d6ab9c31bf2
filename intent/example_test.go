package intent_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/llms"

	"github.com/mdap-go/mdap/intent"
)

func ExampleParse() {
	o, err := intent.Parse(`The move is {"move": [1, 0, 2.0]} done.`)
	fmt.Println(o.Value, o.Intent, err)

	reply := "I need the file first.\n```json\n" +
		`{"tool_intent": {"tool_name": "read_file", "arguments": "{\"path\": \"notes.txt\"}", "rationale": "the plan depends on it"}}` +
		"\n```"
	o, err = intent.Parse(reply)
	fmt.Println(o.Intent.Tool, o.Intent.Args, o.Intent.Rationale, err)

	// Callers read Value by re-marshaling it into their own type.
	o, _ = intent.Parse(`{"move": [1.0, 0, 2e0], "id": 12345678901234567890}`)
	b, _ := json.Marshal(o.Value)
	var step struct {
		Move []int `json:"move"`
		ID   uint64
	}
	fmt.Println(json.Unmarshal(b, &step), step.Move, step.ID)

	_, err = intent.Parse(`{"move": [1, 0, 2]} or maybe {"move": [1, 0, 1]}`)
	fmt.Println(errors.Is(err, intent.ErrAmbiguous))
	_, err = intent.Parse("I am not sure.")
	fmt.Println(errors.Is(err, intent.ErrNoAnswer))
	// Output:
	// map[move:[1 0 2]] <nil> <nil>
	// read_file map[path:notes.txt] the plan depends on it <nil>
	// <nil> [1 0 2] 12345678901234567890
	// true
	// true
}

func ExampleKey() {
	a, _ := intent.Parse("```json\n{\"next_state\": [[2, 3], [], [1]], \"move\": [1, 0, 2]}\n```")
	b, _ := intent.Parse(`Moving disk 1: {"move":[1.0,0,2],"next_state":[[2,3],[],[1]]}`)
	c, _ := intent.Parse(`{"move":["1",0,2],"next_state":[[2,3],[],[1]]}`)
	ka, _ := intent.Key(a)
	kb, _ := intent.Key(b)
	kc, _ := intent.Key(c)
	fmt.Println(ka == kb, ka == kc)

	canon, _ := intent.Canonical(b)
	fmt.Println(string(canon))
	// Output:
	// true false
	// {"move":[1,0,2],"next_state":[[2,3],[],[1]]}
}

func ExampleFromToolCalls() {
	native, _ := intent.FromToolCalls([]llms.ToolCall{{
		ID:           "call_1",
		Type:         "function",
		FunctionCall: &llms.FunctionCall{Name: "read_file", Arguments: `{"path":"notes.txt"}`},
	}})
	written, _ := intent.Parse(`{"tool_intent":{"tool":"read_file","args":{"path":"notes.txt"},"rationale":"why not"}}`)
	kn, _ := intent.Key(native)
	kw, _ := intent.Key(written)
	fmt.Println(kn == kw)

	canon, _ := intent.Canonical(native)
	fmt.Println(string(canon))
	// Output:
	// true
	// {"tool_intent":{"args":{"path":"notes.txt"},"tool":"read_file"}}
}

func ExampleCanonical() {
	o, _ := intent.Parse(`{"b": 1.50, "a": {"z": null, "y": 1e21}, "tool_intent": {"name": "ls", "rationale": "look"}}`)
	canon, _ := intent.Canonical(o)
	fmt.Println(string(canon))
	// Output:
	// {"a":{"y":1e+21,"z":null},"b":1.5,"tool_intent":{"args":{},"tool":"ls"}}
}

func ExampleOutput_DecodeValue() {
	o, err := intent.Parse("```json\n{\"move\": [1, 0, 2.0], \"id\": 12345678901234567890}\n```")
	if err != nil {
		fmt.Println(err)
		return
	}
	var step struct {
		Move []int  `json:"move"`
		ID   uint64 `json:"id"`
	}
	fmt.Println(o.DecodeValue(&step), step.Move, step.ID)

	var loose map[string]any // numbers stay exact: json.Number, not float64
	fmt.Println(o.DecodeValue(&loose), loose["id"])

	var wrong struct {
		Move string `json:"move"`
	}
	err = o.DecodeValue(&wrong)
	fmt.Println(errors.Is(err, intent.ErrDecode))
	// Output:
	// <nil> [1 0 2] 12345678901234567890
	// <nil> 12345678901234567890
	// true
}
