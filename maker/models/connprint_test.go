package models_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mdap-go/mdap/maker/models"
)

// A Conn carries the key and the server's URL with its password, for
// requests only: formatting it, in any verb a log line or a %+v debug
// print would use, shows neither.
func TestConnFormatsWithoutItsSecrets(t *testing.T) {
	c := models.Conn{
		Spec:      models.Spec{Provider: "openai", Name: "gpt"},
		Base:      "http://user:hunter2pw@proxy.example/v1",
		URL:       "http://proxy.example/v1",
		Key:       "sk-secretkey123",
		KeySource: "OPENAI_API_KEY",
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		for _, v := range []any{c, &c} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, "hunter2pw", verb)
			assert.NotContains(t, out, "sk-secret", verb)
			assert.Contains(t, out, "openai:gpt", verb)
			assert.Contains(t, out, "http://proxy.example/v1", verb)
		}
	}
}
