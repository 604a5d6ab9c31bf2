package cluster

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// FuzzDecodeJobAndReply: whatever arrives on the engine as a job or a
// reply (anyone with a role may publish one), decoding never panics; it
// is refused with ErrUndecodable or read into a value that survives a
// round trip, and turning it into a model call (messages, options) or a
// model response never panics.
func FuzzDecodeJobAndReply(f *testing.F) {
	zero := 0.0
	all := callOptionsOf([]llms.CallOption{llms.WithTemperature(1), llms.WithMaxTokens(3)})
	job := Job{Version: WireVersion, ID: "j1", Route: "r", ReplyTo: "mdap.replies." + replyToken("d1") + ".j1", Lease: "00ff",
		Prompts: [][]Message{{Message(llms.TextParts(llms.ChatMessageTypeHuman, "hi"))}, {Message(llms.TextParts(llms.ChatMessageTypeSystem, "s"))}},
		Samples: []Sample{{Step: 3, Index: 0, Seed: 1, Temperature: &zero}, {Step: 3, Index: 1, Seed: 2, Prompt: 1}, {Anon: true, Options: &all}},
		Options: callOptionsOf([]llms.CallOption{llms.WithMaxTokens(9)})}
	jb, _ := json.Marshal(job)
	f.Add(jb)
	rb, _ := json.Marshal(Reply{Version: WireVersion, ID: "j1", Lease: "00ff", Samples: []SampleReply{{Choices: []Choice{{Content: "x", ToolCalls: []ToolCall{{ID: "t", Function: &FunctionCall{Name: "f"}}}}}}}})
	f.Add(rb)
	eb, _ := json.Marshal(Reply{Version: WireVersion, ID: "j1", Samples: []SampleReply{{Error: &ReplyError{Message: "slow", Code: "rate_limit", RetryAfter: 2}}, {}}})
	f.Add(eb)
	f.Add([]byte(`{"v":2,"id":"x","reply_to":"y","samples":[{"s":1}],"prompts":[[{"role":"human","parts":[{"type":"image_url","image_url":{"url":"u"}}]}]]}`))
	f.Add([]byte(`{"v":2,"id":"x","reply_to":"y","samples":[{"s":1,"p":1}],"prompts":[[]]}`))
	f.Add([]byte(`{"v":1,"id":"x","reply_to":"y","messages":[]}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`nul`))
	f.Add([]byte(`{"v":2,"id":"x","reply_to":"mdap.nowhere.x","samples":[{"s":1}],"prompts":[[]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if j, err := decodeJob(data); err != nil {
			require.True(t, errors.Is(err, ErrUndecodable), "%v", err)
		} else {
			b, err := json.Marshal(j)
			require.NoError(t, err)
			again, err := decodeJob(b)
			require.NoError(t, err, "a decoded job re-encodes to a valid job: %s", b)
			b2, err := json.Marshal(again)
			require.NoError(t, err)
			require.JSONEq(t, string(b), string(b2))
			require.NotEmpty(t, j.Samples)
			require.LessOrEqual(t, len(j.Samples), MaxJobSamples)
			for _, s := range j.Samples {
				var o llms.CallOptions
				j.options(s).option()(&o)
				for _, m := range j.Prompts[s.Prompt] { // in range, or decodeJob refused it
					_ = llms.MessageContent(m)
				}
			}
		}
		if r, err := decodeReply(data); err != nil {
			require.True(t, errors.Is(err, ErrUndecodable), "%v", err)
		} else {
			require.NotEmpty(t, r.Samples)
			for _, s := range r.Samples {
				resp, err := s.response("route", r.Worker)
				require.True(t, (resp == nil) != (err == nil), "a response or an error")
				if err != nil {
					require.ErrorIs(t, err, ErrRemote)
				}
			}
		}
	})
}

// TestDecodeJobRefusesAReplySubjectNoDrawerWrites: a job's reply subject
// is its Drawer's (mdap.replies.<token>.<job id>), or the worker refuses
// the job before calling its model: a coordinator naming a subject the
// worker may not publish to, or another job's, would otherwise hold a
// worker's place until its publication timed out.
func TestDecodeJobRefusesAReplySubjectNoDrawerWrites(t *testing.T) {
	t.Parallel()
	tok := replyToken("d1")
	job := func(replyTo string) []byte {
		b, err := json.Marshal(Job{Version: WireVersion, ID: "j1", ReplyTo: replyTo, Prompts: [][]Message{{}}, Samples: []Sample{{}}})
		require.NoError(t, err)
		return b
	}
	_, err := decodeJob(job("mdap.replies." + tok + ".j1"))
	require.NoError(t, err)
	for _, bad := range []string{"mdap.nowhere.j1", "mdap.replies." + tok + ".j2", "mdap.replies." + tok + ".j1.x", "mdap.replies.d1.j1", "mdap.replies." + strings.ToUpper(tok) + ".j1", "mdap.replies.j1"} {
		_, err := decodeJob(job(bad))
		require.ErrorIs(t, err, ErrUndecodable, bad)
	}
	// A job id of more than one token (review4) matches its own reply
	// subject, but the worker's reply would carry a token more than its
	// permissions allow, or none it may publish at all.
	for _, id := range []string{"j1.x", "j1.>", "j1.*", "j 1", "j1\t"} {
		b, err := json.Marshal(Job{Version: WireVersion, ID: id, ReplyTo: "mdap.replies." + tok + "." + id, Prompts: [][]Message{{}}, Samples: []Sample{{}}})
		require.NoError(t, err)
		_, err = decodeJob(b)
		require.ErrorIs(t, err, ErrUndecodable, "job id %q", id)
	}
}
