package intent_test

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/mdap-go/mdap/intent"
)

// Benchmark inputs: the fixtures a real run sees most, plus a 20-disk Hanoi
// state (the paper's size) and the 40 KB overlong reply.
var benchReplies = []struct{ name, file, text string }{
	{name: "hanoi_whole", file: "good.txt"},
	{name: "hanoi_inline", file: "inline.txt"},
	{name: "hanoi20_fenced", text: "Moving disk 1.\n```json\n" + hanoi20 + "\n```\n"},
	{name: "intent_fenced", file: "intent_fenced.txt"},
	{name: "intent_bare_healed", file: "intent_bare.txt"},
	{name: "overlong_40KB", file: "overlong.txt"},
}

const hanoi20 = `{"move": [1, 0, 2], "next_state": [[20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2], [], [1]]}`

func loadBench(b *testing.B, file, text string) string {
	b.Helper()
	if file == "" {
		return text
	}
	data, err := os.ReadFile(filepath.Join(responsesDir, file))
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}

func BenchmarkParse(b *testing.B) {
	for _, r := range benchReplies {
		text := loadBench(b, r.file, r.text)
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, err := intent.Parse(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFromToolCalls(b *testing.B) {
	calls := []llms.ToolCall{{ID: "c", Type: "function", FunctionCall: &llms.FunctionCall{
		Name: "read_file", Arguments: `{"path": "notes/todo.txt", "max_bytes": 4096}`,
	}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := intent.FromToolCalls(calls); err != nil {
			b.Fatal(err)
		}
	}
}

// keyInputs are parsed once; the benchmarks below measure only the keying.
func keyInputs(b *testing.B) []struct {
	name string
	o    intent.Output
} {
	b.Helper()
	var out []struct {
		name string
		o    intent.Output
	}
	for _, r := range benchReplies {
		if r.name == "hanoi_inline" || r.name == "overlong_40KB" || r.name == "intent_bare_healed" {
			continue // same Output as another entry
		}
		o, err := intent.Parse(loadBench(b, r.file, r.text))
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, struct {
			name string
			o    intent.Output
		}{r.name, o})
	}
	return out
}

// BenchmarkKey is the vote key: the canonical text, then its FNV-1a hash
// through hashstructure/v2.
func BenchmarkKey(b *testing.B) {
	for _, in := range keyInputs(b) {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := intent.Key(in.o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCanonical is the canonical JSON text alone.
func BenchmarkCanonical(b *testing.B) {
	for _, in := range keyInputs(b) {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := intent.Canonical(in.o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCanonicalSHA256 is a cryptographic alternative, for comparison:
// SHA-256 over the canonical JSON text, from the same Output.
func BenchmarkCanonicalSHA256(b *testing.B) {
	for _, in := range keyInputs(b) {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := intent.Canonical(in.o)
				if err != nil {
					b.Fatal(err)
				}
				_ = sha256.Sum256(c)
			}
		})
	}
}

// BenchmarkParseAndKey is what one sample costs the voter.
func BenchmarkParseAndKey(b *testing.B) {
	text := loadBench(b, "intent_fenced.txt", "")
	b.ReportAllocs()
	for b.Loop() {
		o, err := intent.Parse(text)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := intent.Key(o); err != nil {
			b.Fatal(err)
		}
	}
}
