package models

import (
	"net/url"
	"os"
	"slices"
	"strings"
)

// Credentials are the secrets that models opened from specs with o may
// send to their servers, for a caller to keep out of what it writes (a
// server that refuses a key may echo it in its error): the API keys of
// the environment (EnvOpenAIKey, EnvAnthropicKey), o.APIKey and each
// spec's ;key=VAR value, and the password of each server URL that
// carries one (http://user:PASSWORD@host/v1, basic authentication at a
// proxy): o.BaseURL, each spec's ;base=, and the environment's
// EnvOpenAIURL, OPENAI_API_BASE, EnvAnthropicURL and EnvOllamaHost. A
// spec that SplitEndpoint refuses adds nothing (Open refuses it too);
// each is listed once, in sorted order, and empty values are left out.
// Cost: one SplitEndpoint per spec.
func Credentials(o Options, specs ...string) []string {
	found := []string{os.Getenv(EnvOpenAIKey), os.Getenv(EnvAnthropicKey), o.APIKey, URLPassword(o.BaseURL)}
	for _, k := range []string{EnvOpenAIURL, envOpenAIAPIBase, EnvAnthropicURL, EnvOllamaHost} {
		found = append(found, URLPassword(os.Getenv(k)))
	}
	for _, spec := range specs {
		if _, so, err := SplitEndpoint(spec, o); err == nil {
			found = append(found, so.APIKey, URLPassword(so.BaseURL))
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
