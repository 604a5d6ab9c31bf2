package match

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mdap-go/mdap/intent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func out(t *testing.T, raw string) intent.Output {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(raw), &v))
	return intent.Output{Value: v}
}

func TestNormalGoIgnoresLayoutCommentsAndLocalNames(t *testing.T) {
	same := [][]string{
		{"func add(a, b int) int { return a + b }", "func add(x int, y int) int {\n\t// sum\n\treturn x + y\n}"},
		{"x := 1\ny := x * 2\nreturn y", "a:=1; b:=a*2; return b"},
		{"func (s *T) Len() int { n := len(s.items); return n }", "func (t *T) Len() int {\n\tk := len(t.items)\n\treturn k\n}"},
		{"package main\nimport \"fmt\"\nfunc main() { s := \"hi\"; fmt.Println(s) }", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tmsg := \"hi\"\n\tfmt.Println(msg)\n}"},
		{"func(v int) int { return v }", "func(w int) int {return w}"},
	}
	for _, c := range same {
		assert.Equal(t, NormalGo(c[0]), NormalGo(c[1]), "%q ~ %q", c[0], c[1])
	}
	differ := [][]string{
		{"func add(a, b int) int { return a + b }", "func add(a, b int) int { return a - b }"},
		{"func add(a, b int) int { return a + b }", "func plus(a, b int) int { return a + b }"}, // package-level names count
		{"x := 1\nreturn x", "x := 2\nreturn x"},
		{"return s.items", "return s.elems"},                         // fields count
		{"a, b := 1, 2\nreturn a - b", "a, b := 1, 2\nreturn b - a"}, // renaming keeps who is who
		{"return total", "return sum"},                               // free names are not locals
	}
	for _, c := range differ {
		assert.NotEqual(t, NormalGo(c[0]), NormalGo(c[1]), "%q !~ %q", c[0], c[1])
	}
	assert.Equal(t, "not go at all {", NormalGo("  not go at all {  "), "what does not parse is compared as trimmed text")
}

func TestCodeMatcherKeysByNormalForm(t *testing.T) {
	m, err := New([]byte(`{"properties":{"code":{"type":"string","x-mdap-match":"code"}}}`))
	require.NoError(t, err)
	require.False(t, m.Tolerant(), "code is a normal form: a key")
	k1, err := m.Key(out(t, `{"code":"func f(a int) int { return a*2 }"}`))
	require.NoError(t, err)
	k2, err := m.Key(out(t, `{"code":"func f(n int) int {\n\treturn n * 2\n}\n"}`))
	require.NoError(t, err)
	k3, err := m.Key(out(t, `{"code":"func f(n int) int { return n * 3 }"}`))
	require.NoError(t, err)
	assert.Equal(t, k1, k2)
	assert.NotEqual(t, k1, k3)

	// Another language through a normaliser the library gives.
	upper := func(src string) (string, error) { return strings.ToUpper(strings.TrimSpace(src)), nil }
	m, err = NewWith([]byte(`{"properties":{"code":{"x-mdap-match":{"kind":"code","language":"Python"}}}}`),
		Options{Normalizers: map[string]Normalizer{"python": upper}})
	require.NoError(t, err)
	k1, _ = m.Key(out(t, `{"code":"print(x) "}`))
	k2, _ = m.Key(out(t, `{"code":"PRINT(X)"}`))
	assert.Equal(t, k1, k2)
	failing := func(string) (string, error) { return "", errors.New("syntax error") }
	m, err = NewWith([]byte(`{"properties":{"code":{"x-mdap-match":{"kind":"code","language":"py"}}}}`),
		Options{Normalizers: map[string]Normalizer{"py": failing}})
	require.NoError(t, err)
	_, err = m.Key(out(t, `{"code":"x"}`))
	require.ErrorIs(t, err, ErrNormalizer, "a failing normaliser leaves the answer unkeyed, never keyed raw")
}

func TestCommandNormalizer(t *testing.T) {
	norm := CommandNormalizer(0, "tr", "a-z", "A-Z")
	got, err := norm("print(x)\n")
	require.NoError(t, err)
	assert.Equal(t, "PRINT(X)", got)
	_, err = CommandNormalizer(0, "false")("x")
	require.ErrorIs(t, err, ErrNormalizer)
	_, err = CommandNormalizer(0, "/no/such/normaliser")("x")
	require.ErrorIs(t, err, ErrNormalizer)
}

// fakeEmbedder maps a text to a deterministic unit vector: texts with the
// same letters (case, spaces and punctuation aside) get one direction, a
// few with a near direction, the rest far apart. calls counts the texts
// embedded.
type fakeEmbedder struct{ calls atomic.Int64 }

func (f *fakeEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	f.calls.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = fakeVector(t)
	}
	return out, nil
}

// fakeVector: "the capital is paris" and "paris is the capital" are
// near (a paraphrase), anything else is its own direction.
func fakeVector(t string) []float32 {
	letters := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r == ' ' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return -1
	}, t)
	switch strings.Join(strings.Fields(letters), " ") {
	case "the capital is paris", "paris is the capital", "paris":
		return []float32{1, 0.1, 0, 0}
	case "it is paris":
		return []float32{1, 0.6, 0, 0} // cosine 0.86 with the above
	}
	h := fnv.New64a()
	h.Write([]byte(letters))
	s := h.Sum64()
	return []float32{0, float32(s & 0xff), float32(s >> 8 & 0xff), float32(s >> 16 & 0xff)}
}

func TestEmbeddingMatcherByThreshold(t *testing.T) {
	emb := &fakeEmbedder{}
	schema := `{"properties":{"summary":{"type":"string","x-mdap-match":{"kind":"embedding","threshold":0.95}},"n":{"type":"integer"}}}`
	m, err := NewWith([]byte(schema), Options{Embedder: emb})
	require.NoError(t, err)
	require.True(t, m.Tolerant())
	ctx := context.Background()
	reps := []intent.Output{out(t, `{"summary":"Lyon","n":1}`), out(t, `{"summary":"The capital is Paris.","n":1}`)}
	i, err := m.Choose(ctx, reps, out(t, `{"summary":"Paris is the capital","n":1}`))
	require.NoError(t, err)
	assert.Equal(t, 1, i, "a paraphrase above the threshold joins")
	i, err = m.Choose(ctx, reps, out(t, `{"summary":"Paris is the capital","n":2}`))
	require.NoError(t, err)
	assert.Equal(t, -1, i, "the other fields stay exact")
	i, err = m.Choose(ctx, reps, out(t, `{"summary":"It is Paris","n":1}`))
	require.NoError(t, err)
	assert.Equal(t, -1, i, "cosine 0.86 is below 0.95")
	calls := emb.calls.Load()
	_, err = m.Choose(ctx, reps, out(t, `{"summary":"It is Paris","n":1}`))
	require.NoError(t, err)
	assert.Equal(t, calls, emb.calls.Load(), "vectors are cached by text")

	m, err = NewWith([]byte(strings.Replace(schema, "0.95", "0.8", 1)), Options{Embedder: emb})
	require.NoError(t, err)
	assert.True(t, m.Match(reps[1], out(t, `{"summary":"It is Paris","n":1}`)), "0.86 is above 0.8")

	boom := errors.New("down")
	m, err = NewWith([]byte(schema), Options{Embedder: embedFunc(func([]string) ([][]float32, error) { return nil, boom })})
	require.NoError(t, err)
	_, err = m.Choose(ctx, reps, out(t, `{"summary":"x","n":1}`))
	require.ErrorIs(t, err, ErrEmbedder)
	require.ErrorIs(t, err, boom)
}

type embedFunc func([]string) ([][]float32, error)

func (f embedFunc) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	return f(texts)
}

// The annotation's model opens a langchaingo embedder: here against a
// local server speaking Ollama's /api/embed and OpenAI's /v1/embeddings
// with the fake's vectors, never the network.
func TestEmbeddingMatcherOverOllamaAndOpenAIAPIs(t *testing.T) {
	var ollamaCalls, openaiCalls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/embed":
			ollamaCalls.Add(1)
			var req struct{ Model, Input string }
			require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
			assert.Equal(t, "nomic-embed-text", req.Model)
			_ = json.NewEncoder(w).Encode(map[string]any{"embeddings": [][]float32{fakeVector(req.Input)}})
		case "/v1/embeddings":
			openaiCalls.Add(1)
			var req struct {
				Model string
				Input []string
			}
			require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
			assert.Equal(t, "text-embedding-3-small", req.Model)
			var data []map[string]any
			for i, in := range req.Input {
				data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": fakeVector(in)})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for _, model := range []string{`"ollama:nomic-embed-text", "url": "` + srv.URL + `"`, `"openai:text-embedding-3-small", "url": "` + srv.URL + `/v1"`} {
		t.Setenv("OPENAI_API_KEY", "test")
		m, err := New([]byte(`{"properties":{"s":{"type":"string","x-mdap-match":{"kind":"embedding","threshold":0.95,"model":` + model + `}}}}`))
		require.NoError(t, err, model)
		i, err := m.Choose(context.Background(), []intent.Output{out(t, `{"s":"Lyon"}`), out(t, `{"s":"the capital is Paris"}`)}, out(t, `{"s":"Paris is the capital"}`))
		require.NoError(t, err, model)
		assert.Equal(t, 1, i, model)
	}
	assert.Positive(t, ollamaCalls.Load())
	assert.Positive(t, openaiCalls.Load())
	_, err := NewWith([]byte(`{"properties":{"s":{"x-mdap-match":{"kind":"embedding","threshold":0.9,"model":"ollama:e"}}}}`), Options{NoModels: true})
	require.ErrorIs(t, err, ErrMatcher, "a client's schema may not make the server call a model")
}

// fakeJudge says two texts mean the same when they share their first
// word (case aside), records what it was shown, and picks the first such
// candidate in the order given.
type fakeJudge struct {
	shown [][]string
}

func (f *fakeJudge) Same(_ context.Context, answer string, candidates []string) (int, error) {
	f.shown = append(f.shown, candidates)
	first := func(s string) string { return strings.Trim(strings.ToLower(strings.Fields(s + " x")[0]), ",.") }
	for i, c := range candidates {
		if first(c) == first(answer) {
			return i, nil
		}
	}
	return -1, nil
}

func TestJudgeMatcherDecidesAmongCandidates(t *testing.T) {
	j := &fakeJudge{}
	m, err := NewWith([]byte(`{"properties":{"verdict":{"type":"string","x-mdap-match":{"kind":"judge","seed":7}},"n":{"type":"integer"}}}`), Options{Judge: j})
	require.NoError(t, err)
	ctx := context.Background()
	reps := []intent.Output{out(t, `{"verdict":"Guilty as charged","n":1}`), out(t, `{"verdict":"Innocent","n":1}`),
		out(t, `{"verdict":"Acquitted","n":1}`), out(t, `{"verdict":"innocent of all","n":2}`)}
	i, err := m.Choose(ctx, reps, out(t, `{"verdict":"innocent, clearly","n":1}`))
	require.NoError(t, err)
	assert.Equal(t, 1, i)
	require.Len(t, j.shown, 1)
	assert.ElementsMatch(t, []string{"Guilty as charged", "Innocent", "Acquitted"}, j.shown[0], "only candidates equal elsewhere are shown")
	i, err = m.Choose(ctx, reps, out(t, `{"verdict":"Acquitted","n":1}`))
	require.NoError(t, err)
	assert.Equal(t, 2, i, "an equal judged value needs no judge")
	assert.Len(t, j.shown, 1)
	i, err = m.Choose(ctx, reps, out(t, `{"verdict":"Mistrial","n":1}`))
	require.NoError(t, err)
	assert.Equal(t, -1, i)

	// The order is shuffled from the seed and the answer: fixed for one
	// question, and not always the classes' order.
	orders := map[string]bool{}
	for _, v := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		j.shown = nil
		_, err := m.Choose(ctx, reps, out(t, `{"verdict":"`+v+`","n":1}`))
		require.NoError(t, err)
		again := j.shown[0]
		_, err = m.Choose(ctx, reps, out(t, `{"verdict":"`+v+`","n":1}`))
		require.NoError(t, err)
		assert.Equal(t, again, j.shown[1], "the same question, the same order")
		orders[strings.Join(again, "|")] = true
	}
	assert.Greater(t, len(orders), 1, "candidates are shuffled, not shown in class order")

	bad := JudgeFunc(func(context.Context, string, []string) (int, error) { return 5, nil })
	m, err = NewWith([]byte(`{"properties":{"v":{"x-mdap-match":"judge"}}}`), Options{Judge: bad})
	require.NoError(t, err)
	_, err = m.Choose(ctx, []intent.Output{out(t, `{"v":"a"}`)}, out(t, `{"v":"b"}`))
	require.ErrorIs(t, err, ErrJudge, "an index out of range is the judge's error, not a guess")
}

func TestJudgeReply(t *testing.T) {
	for reply, want := range map[string]int{"2": 1, " 1.\n": 0, "none": -1, "None.": -1} {
		got, err := judgeReply(reply, 3)
		require.NoError(t, err, reply)
		assert.Equal(t, want, got, reply)
	}
	for _, reply := range []string{"4", "0", "the second", ""} {
		_, err := judgeReply(reply, 3)
		require.ErrorIs(t, err, ErrJudge, reply)
	}
}

func TestCosine(t *testing.T) {
	assert.InDelta(t, 1, Cosine([]float32{1, 2}, []float32{2, 4}), 1e-12)
	assert.InDelta(t, 0, Cosine([]float32{1, 0}, []float32{0, 1}), 1e-12)
	assert.Zero(t, Cosine([]float32{1}, []float32{1, 2}))
	assert.Zero(t, Cosine([]float32{0, 0}, []float32{1, 2}))
	assert.False(t, math.IsNaN(Cosine(nil, nil)))
}
