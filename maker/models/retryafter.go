package models

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxDelay bounds every delay read from a rate-limit answer (ParseRetryAfter,
// maker/models/ratelimit's Delay and ParseDelay): a server naming more is taken at its word, up to a day.
const MaxDelay = 24 * time.Hour

// ParseRetryAfter reads the delay an HTTP answer asks for: its
// retry-after-ms header (milliseconds, fractions allowed, as OpenAI and
// Azure send it), else Retry-After in seconds (fractions allowed) or as
// an HTTP date (relative to now, never negative). ok is false when
// neither is present and well formed. The delay is at most MaxDelay.
// Cost: O(len of the headers).
func ParseRetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return clampSeconds(ms / 1e3), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return clampSeconds(s), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), MaxDelay), true
	}
	return 0, false
}

// clampSeconds turns s seconds (not negative) into a duration of at most
// MaxDelay, without overflow (NaN and +Inf are MaxDelay too).
func clampSeconds(s float64) time.Duration {
	if !(s < MaxDelay.Seconds()) {
		return MaxDelay
	}
	return time.Duration(s * float64(time.Second))
}
