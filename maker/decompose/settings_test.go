package decompose

import (
	"encoding/json"
	"testing"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/stretchr/testify/require"
)

// Settings with several roles' p out of range name the same one every
// time, not whichever a map walk meets first.
func TestBadSettingsNameTheSameFieldEveryTime(t *testing.T) {
	s := Settings{P: map[Role]float64{}}
	for _, r := range Roles {
		s.P[r] = 0.3
	}
	_, err := s.withDefaults(numFamily{}, json.RawMessage(`[1,2]`))
	require.ErrorIs(t, err, ErrConfig)
	first := fielderr.As(err).Fields[0].Name
	for range 50 {
		_, err := s.withDefaults(numFamily{}, json.RawMessage(`[1,2]`))
		require.Equal(t, first, fielderr.As(err).Fields[0].Name)
	}
}
