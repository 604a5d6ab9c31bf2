package cluster

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mdap-go/mdap/maker/hanoi"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// refMessage is Message as MarshalJSON wrote it before its fast path:
// encoding/json and langchaingo's part marshalers, the reference.
type refMessage Message

func (m refMessage) MarshalJSON() ([]byte, error) {
	parts := m.Parts
	if parts == nil {
		parts = []llms.ContentPart{}
	}
	return json.Marshal(struct {
		Role  llms.ChatMessageType `json:"role"`
		Parts []llms.ContentPart   `json:"parts"`
	}{m.Role, parts})
}

// refEncode is json.Marshal(job) with the reference message encoding.
func refEncode(t testing.TB, job Job) []byte {
	t.Helper()
	for _, msgs := range job.Prompts {
		for _, m := range msgs {
			want, err := refMessage(m).MarshalJSON()
			require.NoError(t, err)
			got, err := m.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "Message.MarshalJSON")
		}
	}
	b, err := json.Marshal(job)
	require.NoError(t, err)
	return b
}

func codecJobs() []Job {
	zero, one := 0.0, 1.0
	opts := callOptionsOf([]llms.CallOption{llms.WithMaxTokens(750), llms.WithStopWords([]string{"<end>"}), llms.WithMetadata(map[string]any{"a": 1})})
	text := "You are <solving> Hanoi & \"more\":\n\tmove = [1, 0, 1]\u2028\u2029 \x00 \xff é 🙂"
	return []Job{
		{Version: WireVersion, ID: "j1", Route: "sim:seed=1", ReplyTo: "mdap.replies.d.j1", Lease: "00ff",
			Prompts: [][]Message{{Message(llms.TextParts(llms.ChatMessageTypeSystem, text)), Message(llms.TextParts(llms.ChatMessageTypeHuman, "a", "", "b"))}},
			Options: opts,
			Samples: []Sample{{Step: 3, Index: 0, Seed: 1, Temperature: &zero}, {Step: 3, Index: 1, Seed: 2, Temperature: &one}, {Anon: true, Options: &opts}}},
		{Version: WireVersion, ID: "j2", Route: "r", ReplyTo: "x"},
		{Version: WireVersion, ID: "j3", Route: "r", ReplyTo: "x", Prompts: [][]Message{nil, {}, {{Role: llms.ChatMessageTypeAI}}, {{Role: "we<ird>\"", Parts: []llms.ContentPart{}}}},
			Samples: []Sample{{Prompt: 3}}},
		{Version: WireVersion, ID: "j4", Route: "r", ReplyTo: "x", // not text only: encoding/json
			Prompts: [][]Message{{{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.TextContent{Text: "t"}, llms.ImageURLContent{URL: "u"}}}}},
			Samples: []Sample{{}}},
	}
}

// TestJobCodecMatchesEncodingJSON: the fast encoder writes the bytes
// encoding/json writes, and the fast decoder reads the values it reads,
// text parts or not.
func TestJobCodecMatchesEncodingJSON(t *testing.T) {
	// encodeJob writes Job's fields one by one: a new field must be
	// added there too.
	require.Equal(t, 8, reflect.TypeFor[Job]().NumField(), "Job's fields changed: update encodeJob")
	for _, job := range codecJobs() {
		want := refEncode(t, job)
		got, err := encodeJob(&job)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "encodeJob")

		var ref, fast Job
		require.NoError(t, json.Unmarshal(want, &ref))
		require.NoError(t, unmarshalJob(want, &fast))
		require.Equal(t, ref, fast, "unmarshalJob of %s", want)
	}
	// langchaingo's other forms of a text message read the same.
	for _, data := range []string{
		`{"v":2,"id":"x","reply_to":"y","samples":[{}],"prompts":[[{"role":"human","text":"single"}]]}`,
		`{"v":2,"id":"x","reply_to":"y","samples":[{}],"prompts":[[{"role":"human","text":"ignored","parts":[{"text":"p"}]}]]}`,
		`{"V":2,"ID":"x","reply_to":"y","samples":[{}],"PROMPTS":[[{"ROLE":"human","Parts":[{"TYPE":"text","Text":"p"}]}],null]}`,
		`{"v":2,"id":"x","reply_to":"y","samples":[{}],"prompts":[[null]]}`,
		`{"v":2,"id":"x","reply_to":"y","samples":[{}],"prompts":[[{"role":"human","parts":[{"type":"text","image_url":5}]}]]}`,
		`{"v":2,"id":"x","reply_to":"y","samples":[{}],"prompts":[[{"role":"human","parts":[{"type":"binary","binary":{"data":"!!"}}]}]]}`,
		`{"v":2,"id":"x","reply_to":"y","samples":[{}],"prompts":[[{"role":"human","parts":[{"type":"nope"}]}]]}`,
		`{"v":2,"id":"x","reply_to":"y","samples":[{}],"prompts":[["text"]]}`,
	} {
		requireSameDecode(t, []byte(data))
	}
}

// requireSameDecode checks that unmarshalJob and encoding/json agree on
// data: both refuse it, or both read the same job. JSON leaves a repeated
// name undefined; encoding/json, which never writes one, merges a
// repeated prompts key into the messages it read first, where
// langchaingo's unmarshaler replaces them: such inputs are not compared.
func requireSameDecode(t *testing.T, data []byte) {
	t.Helper()
	var ref, fast Job
	refErr := json.Unmarshal(data, &ref)
	fastErr := unmarshalJob(data, &fast)
	require.Equal(t, refErr == nil, fastErr == nil, "errors %v and %v on %q", refErr, fastErr, data)
	if refErr == nil && topLevelKeys(data, "prompts") <= 1 {
		require.Equal(t, ref, fast, "%q", data)
	}
}

// topLevelKeys counts the names of data's top-level object that
// encoding/json takes for name.
func topLevelKeys(data []byte, name string) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		if k, ok := tok.(string); ok && strings.EqualFold(k, name) {
			n++
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return n
		}
	}
	return n
}

// FuzzJobCodec: on any input the fast decoder agrees with encoding/json,
// and a job it reads re-encodes to encoding/json's bytes.
func FuzzJobCodec(f *testing.F) {
	for _, job := range codecJobs() {
		f.Add(refEncode(f, job))
	}
	f.Add([]byte(`{"v":2,"id":"x","reply_to":"y","samples":[{}],"prompts":[[{"role":"human","text":"single"}]]}`))
	f.Add([]byte(`{"v":2,"id":"x","reply_to":"y","samples":[{}],"prompts":[[{"role":"human","parts":[{"type":"image_url","image_url":{"url":"u"}}]}]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		requireSameDecode(t, data)
		var job Job
		if unmarshalJob(data, &job) != nil {
			return
		}
		want := refEncode(t, job)
		got, err := encodeJob(&job)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	})
}

// BenchmarkJobCodec encodes and decodes a 6-disk Hanoi wave of three
// samples (a 2.4 KB job) through encoding/json with langchaingo's
// marshalers (the reference) and through the fast paths.
func BenchmarkJobCodec(b *testing.B) {
	task, err := hanoi.New(6)
	require.NoError(b, err)
	zero := 0.0
	job := Job{Version: WireVersion, ID: "job", Route: "sim", ReplyTo: "mdap.replies.d.job", Lease: leaseKey(),
		Options: callOptionsOf([]llms.CallOption{llms.WithMaxTokens(750)})}
	job.Prompts = [][]Message{nil}
	for _, m := range task.Messages() {
		job.Prompts[0] = append(job.Prompts[0], Message(m))
	}
	for i := range 3 {
		job.Samples = append(job.Samples, Sample{Step: 5, Index: i, Seed: i + 1, Temperature: &zero})
	}
	data := refEncode(b, job)
	ref := refJobOf(job)
	refData, err := json.Marshal(ref)
	require.NoError(b, err)
	require.Equal(b, string(data), string(refData))
	b.Run("encode/encoding-json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(ref)
		}
	})
	b.Run("encode/fast", func(b *testing.B) {
		for b.Loop() {
			_, _ = encodeJob(&job)
		}
	})
	b.Run("decode/encoding-json", func(b *testing.B) {
		for b.Loop() {
			var j Job
			_ = json.Unmarshal(data, &j)
		}
	})
	b.Run("decode/fast", func(b *testing.B) {
		for b.Loop() {
			var j Job
			_ = unmarshalJob(data, &j)
		}
	})
}

// refJobOf is job with the reference message encoding, field for field.
func refJobOf(job Job) any {
	prompts := make([][]refMessage, len(job.Prompts))
	for i, msgs := range job.Prompts {
		for _, m := range msgs {
			prompts[i] = append(prompts[i], refMessage(m))
		}
	}
	return struct {
		Version int            `json:"v"`
		ID      string         `json:"id"`
		Route   string         `json:"route"`
		ReplyTo string         `json:"reply_to"`
		Lease   string         `json:"lease,omitempty"`
		Prompts [][]refMessage `json:"prompts"`
		Options CallOptions    `json:"options"`
		Samples []Sample       `json:"samples"`
	}{job.Version, job.ID, job.Route, job.ReplyTo, job.Lease, prompts, job.Options, job.Samples}
}
