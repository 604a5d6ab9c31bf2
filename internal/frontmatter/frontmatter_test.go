package frontmatter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"none", "# title\n", nil},
		{"empty", "---\n---\nbody", map[string]string{}},
		{"plain", "---\nname: x\ndescription: a b: c\n---\n", map[string]string{"name": "x", "description": "a b: c"}},
		{"crlf and bom", "\ufeff---\r\ndescription: yes\r\n---\r\n", map[string]string{"description": "yes"}},
		{"dots close", "---\ndescription: yes\n...\n", map[string]string{"description": "yes"}},
		{"double escapes", `---` + "\n" + `description: "tab\there \"q\" \u00e9"` + "\n---\n", map[string]string{"description": "tab\there \"q\" é"}},
		{"double with comment", "---\ndescription: \"x # not a comment\" # comment\n---\n", map[string]string{"description": "x # not a comment"}},
		{"single", "---\ndescription: 'a ''b'' c'\n---\n", map[string]string{"description": "a 'b' c"}},
		{"plain continued", "---\ndescription: first\n  second\n  third\nname: n\n---\n", map[string]string{"description": "first second third", "name": "n"}},
		{"literal block", "---\ndescription: |-\n  one\n    two\n\n  three\n---\n", map[string]string{"description": "one\n  two\n\nthree"}},
		{"folded block", "---\ndescription: >\n  one\n  two\n\n  three\n\n---\n", map[string]string{"description": "one two\nthree"}},
		{"nested skipped", "---\nmeta:\n  a: 1\n  b: [2]\nlist:\n- x\n- y\ndescription: d\n---\n", map[string]string{"meta": "", "list": "", "description": "d"}},
		{"url value", "---\nhome: https://example.com/x\n---\n", map[string]string{"home": "https://example.com/x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse([]byte(c.in))
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
	for _, bad := range []string{
		"---\ndescription: x\n",             // never closed
		"---\njust words\n---\n",            // no colon
		"---\n  indented: first\n---\n",     // indented line, no key
		"---\nd: \"open\n---\n",             // unterminated
		"---\nd: 'open\n---\n",              // unterminated
		"---\nd: \"x\" trailing\n---\n",     // text after the quote
		"---\nd: \"bad \\q escape\"\n---\n", // bad escape
		"---\nd: 1\nd: 2\n---\n",            // repeated key
		"---\nkey:value\n---\n",             // no space after the colon
		"---\nd: |x\n  y\n---\n",            // bad block header
	} {
		_, err := Parse([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

// FuzzParse: any input of bounded size parses or fails without panicking,
// and the same input always gives the same result.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"---\nname: x\ndescription: a b: c\n---\n",
		"---\ndescription: >\n  one\n  two\n\n  three\n\n---\n",
		"---\ndescription: |-\n  one\n    two\n\n  three\n---\n",
		"---\nd: \"x\\u00e9\" # c\ne: 'a ''b'''\n---\n",
		"---\nmeta:\n  a: 1\nlist:\n- x\n---\n",
		"\ufeff---\r\nd: x\r\n...\n",
		"---\nd: |\n\t\tx\n  y\n---\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4<<10 {
			return
		}
		m1, err1 := Parse(b)
		m2, err2 := Parse(b)
		assert.Equal(t, m1, m2)
		assert.Equal(t, err1 == nil, err2 == nil)
		if err1 != nil {
			assert.Nil(t, m1)
		}
	})
}
