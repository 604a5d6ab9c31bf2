package credentials_test

import (
	"testing"

	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/credentials"
	"github.com/stretchr/testify/assert"
)

// Of finds every secret a model may send, and nothing else: the
// environment's keys, Options.APIKey, each spec's ;key=VAR value, and the
// password of every server URL (Options.BaseURL, ;base=, the
// environment's four); a spec that does not parse adds nothing.
func TestCredentials(t *testing.T) {
	for k, v := range map[string]string{
		"OPENAI_API_KEY":     "env-openai-1",
		"ANTHROPIC_API_KEY":  "env-anthropic-2",
		"MDAP_TEST_KEY_A":    "spec-key-3",
		"MDAP_TEST_OTHER":    "not-held-4",
		"OPENAI_BASE_URL":    "http://u:openai-url-5@127.0.0.1:1/v1",
		"OPENAI_API_BASE":    "http://u:api-base-6@127.0.0.1:2/v1",
		"ANTHROPIC_BASE_URL": "http://u:anthropic-url-7@127.0.0.1:3",
		"OLLAMA_HOST":        "http://u:ollama-8@127.0.0.1:4",
	} {
		t.Setenv(k, v)
	}
	got := credentials.Of(models.Options{APIKey: "option-key-9", BaseURL: "http://u:option-url-10@127.0.0.1:5/v1"},
		"openai:m;key=MDAP_TEST_KEY_A", "openai:n;base=http://u:spec-url-11@127.0.0.1:6/v1",
		"openai:bad;key=MDAP_TEST_UNSET", "", "sim")
	assert.Equal(t, []string{"anthropic-url-7", "api-base-6", "env-anthropic-2", "env-openai-1", "ollama-8",
		"openai-url-5", "option-key-9", "option-url-10", "spec-key-3", "spec-url-11"}, got, "each once, sorted")
}

// URLPassword is the password of a URL's user information, and "" for a
// URL without one or what is not a URL.
func TestURLPassword(t *testing.T) {
	for raw, want := range map[string]string{
		"http://user:pw-1@host/v1":   "pw-1",
		" http://user:pw-2@host/v1 ": "pw-2",
		"http://user@host/v1":        "",
		"http://host/v1":             "",
		"127.0.0.1:11434":            "",
		"://bad":                     "",
		"":                           "",
	} {
		assert.Equal(t, want, credentials.URLPassword(raw), raw)
	}
}

// A password is also held as the URL writes it: the model's name and its
// errors quote the URL, so a percent-escaped password (p%40ss for p@ss)
// must be caught in that form as well as decoded.
func TestCredentialsHoldAnEscapedPasswordAsWritten(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "OLLAMA_HOST"} {
		t.Setenv(k, "")
	}
	t.Setenv("OPENAI_BASE_URL", "http://u:env%2Fpw-3@127.0.0.1:3/v1")
	got := credentials.Of(models.Options{BaseURL: "http://u:opt%40pw-1@127.0.0.1:1/v1"},
		"openai:m;base=http://u:spec%3Apw-2@127.0.0.1:2/v1", "openai:n;base=http://u:plain-pw-4@127.0.0.1:4/v1")
	assert.Equal(t, []string{"env%2Fpw-3", "env/pw-3", "opt%40pw-1", "opt@pw-1", "plain-pw-4", "spec%3Apw-2", "spec:pw-2"}, got)
}

// Each secret is listed once however many places hold it (the
// environment's key named again by ;key=, one password in two URLs).
func TestCredentialsListEachOnce(t *testing.T) {
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "OLLAMA_HOST"} {
		t.Setenv(k, "")
	}
	t.Setenv("OPENAI_API_KEY", "same-key-1")
	got := credentials.Of(models.Options{APIKey: "same-key-1", BaseURL: "http://u:same-pw-2@127.0.0.1:1/v1"},
		"openai:m;key=OPENAI_API_KEY", "openai:n;base=http://v:same-pw-2@127.0.0.1:2/v1", "openai:o")
	assert.Equal(t, []string{"same-key-1", "same-pw-2"}, got)
}

// A spec SplitEndpoint refuses still gives the passwords of its ;base=
// URLs: the refusal quotes the spec, URL and all, and a caller prints it.
func TestCredentialsOfARefusedSpecHoldItsBasePassword(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "OLLAMA_HOST"} {
		t.Setenv(k, "")
	}
	t.Setenv("MDAP_TEST_KEY_A", "spec-key-3")
	for _, spec := range []string{
		"openai:m;base=http://u:refused-pw-1@127.0.0.1:1/v1;key=MDAP_TEST_UNSET",
		"openai:m;base=http://u:refused-pw-1@127.0.0.1:1/v1;rpm=0",
		"openai:m;rpm=0;base=http://u:refused-pw-1@127.0.0.1:1/v1",
		"openai:m;base=http://u:refused-pw-1@127.0.0.1:1/v1;base=http://127.0.0.1:2/v1",
	} {
		_, _, err := models.SplitEndpoint(spec, models.Options{})
		assert.Error(t, err, spec)
		assert.Equal(t, []string{"refused-pw-1"}, credentials.Of(models.Options{}, spec), spec)
	}
}

// ShownSpec drops the user information of each ;base= URL, keeps the
// rest of the spec as given, and leaves a spec without ;base= alone.
func TestShownSpecDropsUserinfo(t *testing.T) {
	for in, want := range map[string]string{
		"openai:gpt-x;base=http://user:p%40ss@127.0.0.1:8000/v1;key=TEAM_KEY": "openai:gpt-x;base=http://127.0.0.1:8000/v1;key=TEAM_KEY",
		"openai:gpt-x;key=TEAM_KEY;base=http://user@h/v1":                     "openai:gpt-x;key=TEAM_KEY;base=http://h/v1",
		"openai:gpt-x;base=http://h/v1":                                       "openai:gpt-x;base=http://h/v1",
		"ollama:llama3":                                                       "ollama:llama3",
	} {
		assert.Equal(t, want, credentials.ShownSpec(in), in)
	}
}
