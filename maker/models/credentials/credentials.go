// Package credentials lists the secrets a model opened by maker/models
// may send to its server, and shows a model spec without them: what a
// caller that writes logs, traces or replies (a command, the MCP server)
// keeps out of them. It reads the environment variables maker/models
// names (models.SecretVars), so a new provider is covered by its own
// declaration there.
package credentials

import (
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/mdap-go/mdap/maker/models"
	_ "github.com/mdap-go/mdap/maker/models/all" // every provider a spec may name
)

// Of returns the secrets that models opened from specs with o may
// send to their servers, for a caller to keep out of what it writes (a
// server that refuses a key may echo it in its error): the API keys of
// the environment (models.SecretVars: openai.EnvKey, anthropic.EnvKey), o.APIKey and each
// spec's ;key=VAR value, and the password of each server URL that
// carries one (http://user:PASSWORD@host/v1, basic authentication at a
// proxy): o.BaseURL, each spec's ;base=, and the environment's
// server URL variables (openai.EnvURL, OPENAI_API_BASE, anthropic.EnvURL and ollama.EnvHost),
// decoded and, when it differs, as the URL writes it (p%40ss: a model's
// name and its errors quote the URL). A spec that SplitEndpoint refuses
// adds only the passwords of its ;base= URLs (its error quotes the spec;
// models.Open refuses it, so nothing is sent); each is listed once, in sorted order, and empty values are left out.
// Cost: one models.SplitEndpoint per spec.
func Of(o models.Options, specs ...string) []string {
	found := []string{o.APIKey}
	found = append(found, urlPasswords(o.BaseURL)...)
	keys, urls := models.SecretVars()
	for _, k := range keys {
		found = append(found, os.Getenv(k))
	}
	for _, k := range urls {
		found = append(found, urlPasswords(os.Getenv(k))...)
	}
	for _, spec := range specs {
		if _, so, err := models.SplitEndpoint(spec, o); err == nil {
			found = append(found, so.APIKey)
			found = append(found, urlPasswords(so.BaseURL)...)
			continue
		}
		// SplitEndpoint's error quotes spec, and a caller prints it.
		_, rest, _ := strings.Cut(spec, ";")
		for _, field := range strings.Split(rest, ";") {
			if k, v, ok := strings.Cut(field, "="); ok && k == "base" {
				found = append(found, urlPasswords(v)...)
			}
		}
	}
	slices.Sort(found)
	found = slices.Compact(found)
	if len(found) > 0 && found[0] == "" {
		found = found[1:]
	}
	return found
}

// URLPassword is the password of raw's user information
// (http://user:PASSWORD@host/v1), or "" when it has none or raw is not a
// URL.
func URLPassword(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// urlPasswords are raw's password decoded (URLPassword) and, when it
// differs, as raw writes it, percent-escapes and all; none when raw has
// no password.
func urlPasswords(raw string) []string {
	p := URLPassword(raw)
	if p == "" {
		return nil
	}
	// The user information is what precedes the authority's last '@';
	// url.Parse accepted raw, so it is there.
	_, rest, _ := strings.Cut(strings.TrimSpace(raw), "//")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		if _, written, ok := strings.Cut(rest[:i], ":"); ok && written != p {
			return []string{p, written}
		}
	}
	return []string{p}
}

// ShownSpec is spec as reports and summaries show it: each ;base= URL
// without its user information (user:password@), which is a credential;
// the rest as given. It reads no environment and refuses nothing.
func ShownSpec(spec string) string {
	head, rest, ok := strings.Cut(spec, ";")
	if !ok {
		return spec
	}
	fields := strings.Split(rest, ";")
	for i, f := range fields {
		if v, ok := strings.CutPrefix(f, "base="); ok {
			fields[i] = "base=" + models.ShownURL(v)
		}
	}
	return head + ";" + strings.Join(fields, ";")
}
