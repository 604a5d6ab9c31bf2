// Package ratelimit reads a rate-limit refusal of any origin: whether an
// error is one (IsRateLimited) and the delay it names (Delay, ParseDelay),
// for maker/batch's shared limits, which pause every task for it. The
// contract is maker.RetryAfter's (an error carries its delay as a
// RetryAfter() time.Duration method, or as langchaingo's "retry_after"
// detail), which the step loop reads itself; models.ErrRateLimited is the
// one sentinel and models.ParseRetryAfter reads the HTTP headers.
package ratelimit

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/tmc/langchaingo/llms"
)

// IsRateLimited reports whether err is a provider's refusal for rate:
// llms.IsRateLimitError (langchaingo's mapped errors, such as
// openai.MapError's for HTTP 429), models.ErrRateLimited (which maker/models'
// errors wrap and a custom model may wrap in its own), or an unmapped error
// whose message says "status code: 429", "too many requests" or "rate
// limit". Cost: a look at the error chain and its message.
func IsRateLimited(err error) bool {
	if err == nil {
		return false
	}
	if llms.IsRateLimitError(err) || errors.Is(err, models.ErrRateLimited) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"status code: 429", "too many requests", "rate limit"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// Delay returns the delay a rate-limit error names: the contract
// maker.RetryAfter reads (an error in the chain with a RetryAfter()
// time.Duration method, or langchaingo's rate-limit error with a
// "retry_after" detail), else the delay in the message of the error or of one in its chain ("Please try again in 1.5s", "try again in 6m0s", "retry after
// 20 seconds", "Retry-After: 3"; a bare number is seconds, as in the HTTP
// header). ok is false when it names none. The delay is never negative
// and at most 24 hours. Cost: linear in the messages of the chain (at
// most 32 errors are read).
func Delay(err error) (d time.Duration, ok bool) {
	if err == nil {
		return 0, false
	}
	if d, ok := maker.RetryAfter(err); ok {
		return min(d, models.MaxDelay), true
	}
	// A mapped error's own message may drop the provider's (openai.MapError
	// says "Rate limit exceeded" and keeps the provider's message in its
	// cause): read every message in the chain, outermost first.
	queue := []error{err}
	for seen := 0; len(queue) > 0 && seen < 32; seen++ {
		e := queue[0]
		queue = queue[1:]
		if d, ok := ParseDelay(e.Error()); ok {
			return d, true
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if next := u.Unwrap(); next != nil {
				queue = append(queue, next)
			}
		case interface{ Unwrap() []error }:
			for _, next := range u.Unwrap() {
				if next != nil {
					queue = append(queue, next)
				}
			}
		}
	}
	return 0, false
}

// delayTriggers introduce a delay in a provider's message.
var delayTriggers = []string{"try again in", "retry in", "retry after", "retry-after", "retry_after", "wait"}

// ParseDelay finds a delay in a provider's message (see RetryAfter):
// after "try again in", "retry in", "retry after", "retry-after" or
// "wait", a duration such as 1.5s, 300ms, 6m0s, 20 seconds, 2 minutes or
// a bare number of seconds. ok is false when there is none. The delay is
// never negative and at most 24 hours. Cost: linear in s.
func ParseDelay(s string) (d time.Duration, ok bool) {
	low := strings.ToLower(s)
	for _, trig := range delayTriggers {
		for from := 0; from < len(low); {
			i := strings.Index(low[from:], trig)
			if i < 0 {
				break
			}
			rest := low[from+i+len(trig):]
			if d, ok := durationPrefix(rest); ok {
				return d, true
			}
			from += i + len(trig)
		}
	}
	return 0, false
}

// durationPrefix reads a duration at the start of s, after spaces, a colon
// or an equals sign: number-and-unit terms, summed ("6m0s", "1 minute 30
// seconds"); a lone number without a unit is seconds.
func durationPrefix(s string) (time.Duration, bool) {
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == ':' || s[i] == '=' || s[i] == '"' || s[i] == '\t') {
			i++
		}
	}
	skip()
	var total float64 // seconds
	terms := 0
	for i < len(s) {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start || i-start > 9 {
			break
		}
		if i+1 < len(s) && s[i] == '.' && s[i+1] >= '0' && s[i+1] <= '9' {
			i++
			for frac := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; frac++ {
				i++
				if frac > 9 {
					return 0, false
				}
			}
		}
		v, err := strconv.ParseFloat(s[start:i], 64)
		if err != nil {
			return 0, false
		}
		for i < len(s) && s[i] == ' ' {
			i++
		}
		ustart := i
		for i < len(s) && s[i] >= 'a' && s[i] <= 'z' {
			i++
		}
		unit, known := units[s[ustart:i]]
		if !known {
			if terms == 0 && (ustart == i || !isWordByte(s, ustart)) {
				i = ustart // a bare number: seconds
				total += v
				terms++
			}
			break
		}
		total += v * unit
		terms++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			// "1 minute 30 seconds": another term after a space.
			j := i
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j == i || j >= len(s) || s[j] < '0' || s[j] > '9' {
				break
			}
			i = j
		}
	}
	if terms == 0 {
		return 0, false
	}
	if total >= models.MaxDelay.Seconds() {
		return models.MaxDelay, true
	}
	return time.Duration(total * float64(time.Second)), true
}

func isWordByte(s string, i int) bool { return i < len(s) && s[i] >= 'a' && s[i] <= 'z' }

// units are the words of a delay's unit, in seconds.
var units = map[string]float64{
	"ms": 1e-3, "millisecond": 1e-3, "milliseconds": 1e-3,
	"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
	"m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
	"h": 3600, "hour": 3600, "hours": 3600,
}
