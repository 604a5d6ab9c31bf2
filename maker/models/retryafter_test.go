package models_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/mdap-go/mdap/maker/models"
	"github.com/stretchr/testify/assert"
)

func TestParseRetryAfterHeader(t *testing.T) {
	for v, want := range map[string]time.Duration{"3": 3 * time.Second, "0": 0, " 5 ": 5 * time.Second} {
		d, ok := models.ParseRetryAfter(http.Header{"Retry-After": {v}}, time.Now())
		assert.True(t, ok, v)
		assert.Equal(t, want, d, v)
	}
	now := time.Now()
	d, ok := models.ParseRetryAfter(http.Header{"Retry-After": {now.Add(90 * time.Second).UTC().Format(http.TimeFormat)}}, now)
	assert.True(t, ok)
	assert.InDelta(t, 90, d.Seconds(), 1.5)
	for _, v := range []string{"", "soon", "-3"} {
		_, ok := models.ParseRetryAfter(http.Header{"Retry-After": {v}}, now)
		assert.False(t, ok, v)
	}
}
