package models_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mdap-go/mdap/maker/models"
)

// A Conn carries the key and the server's URL with its password, for
// requests only: formatting it, in any verb (a %d slip in a log line
// too, which fmt would print as %!d(string=...)), shows neither.
func TestConnFormatsWithoutItsSecrets(t *testing.T) {
	c := models.Conn{
		Spec:      models.Spec{Provider: "openai", Name: "gpt"},
		Base:      "http://user:hunter2pw@proxy.example/v1",
		URL:       "http://proxy.example/v1",
		Key:       "sk-secretkey123",
		KeySource: "OPENAI_API_KEY",
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%t", "%f", "%e", "%g", "%c", "%U", "%o", "%b"} {
		for _, v := range []any{c, &c} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, "hunter2pw", verb)
			assert.NotContains(t, out, "sk-secret", verb)
		}
	}
	assert.Equal(t, `models.Conn{openai:gpt at "http://proxy.example/v1", key from "OPENAI_API_KEY"}`, fmt.Sprintf("%+v", &c))
}
