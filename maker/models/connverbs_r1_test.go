package models_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mdap-go/mdap/maker/models"
)

// review1: String and GoString cover %v, %s, %q, %x and %#v only; any
// other verb (a %d or %t slip in a log line, which fmt prints as
// %!d(string=...)) still prints the Conn's fields, the key and the
// proxy password among them. A Format method that prints String for
// every verb closes them all.
func TestConnFormatsWithoutItsSecretsInEveryVerb(t *testing.T) {
	c := models.Conn{
		Spec:      models.Spec{Provider: "openai", Name: "gpt"},
		Base:      "http://user:hunter2pw@proxy.example/v1",
		URL:       "http://proxy.example/v1",
		Key:       "sk-secretkey123",
		KeySource: "OPENAI_API_KEY",
	}
	for _, verb := range []string{"%d", "%t", "%f", "%e", "%g", "%c", "%U", "%o", "%b"} {
		for _, v := range []any{c, &c} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, "hunter2pw", "%s of %T: %s", verb, v, out)
			assert.NotContains(t, out, "sk-secret", "%s of %T: %s", verb, v, out)
		}
	}
}
