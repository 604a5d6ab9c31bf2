package models

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// envName is an environment variable's name a spec may name for its key.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// SplitEndpoint cuts a spec's per-model endpoint from it: a spec may end
// with ";base=URL" (the model's own server, over Options.BaseURL and the
// environment) and ";key=VAR" (the environment variable holding its API
// key, over OPENAI_API_KEY or ANTHROPIC_API_KEY), ";rpm=N" (at most N
// calls started per minute to this model, evenly spaced; a positive
// number) and ";inflight=N" (at most N calls in flight to this model at
// once; a positive integer), in any order, so that models of different
// servers make one ensemble, each within its own server's limits:
//
//	openai:gpt-4.1-mini;key=OPENAI_KEY_TEAM_A;rpm=500
//	openai:qwen3=0.1/0.3;base=http://127.0.0.1:8000/v1;inflight=4
//
// rpm and inflight set Options.ModelRPM and Options.ModelInFlight, which
// Open's model enforces by itself (see there), under any limits shared by
// every model (maker/batch.Limits, --max-inflight, --rpm).
//
// It returns the spec without them and o with them applied; a key
// variable that is unset or empty is an error (a key is never written in
// a spec, which would show in process lists and journals). Errors wrap
// ErrSpec. Cost: O(len(spec)).
func SplitEndpoint(spec string, o Options) (string, Options, error) {
	head, rest, ok := strings.Cut(spec, ";")
	if !ok {
		return spec, o, nil
	}
	seen := map[string]bool{}
	for _, field := range strings.Split(rest, ";") {
		k, v, ok := strings.Cut(field, "=")
		if !ok || v == "" || seen[k] {
			return "", o, fmt.Errorf("%w: %q: want ;base=URL, ;key=ENV_VAR, ;rpm=N and/or ;inflight=N after the model, each once", ErrSpec, spec)
		}
		seen[k] = true
		switch k {
		case "base":
			if u, err := url.Parse(v); err != nil || u.Scheme == "" || u.Host == "" {
				return "", o, fmt.Errorf("%w: %q: base %q is not an http(s) URL such as http://127.0.0.1:8000/v1", ErrSpec, spec, v)
			}
			o.BaseURL = v
		case "key":
			if !envName.MatchString(v) {
				return "", o, fmt.Errorf("%w: %q: key=%s must name an environment variable (letters, digits, _), never hold the key itself", ErrSpec, spec, v)
			}
			key := os.Getenv(v)
			if key == "" {
				return "", o, fmt.Errorf("%w: %q: the environment variable %s is not set", ErrSpec, spec, v)
			}
			o.APIKey, o.keyVar = key, v
		case "rpm":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) || f > maxModelRPM {
				return "", o, fmt.Errorf("%w: %q: rpm=%s: use a positive number of calls per minute for this model, at most %g", ErrSpec, spec, v, float64(maxModelRPM))
			}
			o.ModelRPM = f
		case "inflight":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxModelInFlight {
				return "", o, fmt.Errorf("%w: %q: inflight=%s: use a whole number of calls in flight at once to this model, from 1 to %d", ErrSpec, spec, v, maxModelInFlight)
			}
			o.ModelInFlight = n
		default:
			return "", o, fmt.Errorf("%w: %q: unknown setting %q; want ;base=URL, ;key=ENV_VAR, ;rpm=N or ;inflight=N", ErrSpec, spec, k)
		}
	}
	return head, o, nil
}
