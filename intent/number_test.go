package intent_test

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdap-go/mdap/intent"
)

func TestCanonicalNumber(t *testing.T) {
	for in, want := range map[string]string{
		"0":                      "0",
		"-0":                     "0",
		"-0.000e7":               "0",
		"1":                      "1",
		"1.0":                    "1",
		"1e0":                    "1",
		"1E+0":                   "1",
		"10e-1":                  "1",
		"0.1e1":                  "1",
		"-1":                     "-1",
		"100":                    "100",
		"1e2":                    "100",
		"1.5":                    "1.5",
		"1.50":                   "1.5",
		"0.1":                    "0.1",
		"0.000001":               "0.000001",
		"1e-6":                   "0.000001",
		"1e-7":                   "1e-7",
		"0.00000012":             "1.2e-7",
		"123456789012345678901":  "123456789012345678901",       // 21 digits: plain
		"1234567890123456789012": "1.234567890123456789012e+21", // 22 digits: exponent
		"1e21":                   "1e+21",
		"1e20":                   "100000000000000000000",
		"-1.5e300":               "-1.5e+300",
		"12345678901234567890":   "12345678901234567890",
		"9007199254740993":       "9007199254740993",
		"0.30000000000000004":    "0.30000000000000004",
		"123.456e1":              "1234.56",
	} {
		got, err := intent.CanonicalNumber(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		checkCanonicalNumber(t, in, got)
	}
	for _, bad := range []string{"", "-", "+1", "01", "000", "1.", ".5", "1e", "1e+", "0x10", "1_000", "Infinity", "NaN", "1e1234567890", " 1", "1 ", "1.5.2", "--1"} {
		_, err := intent.CanonicalNumber(bad)
		require.ErrorIs(t, err, intent.ErrMalformed, "%q", bad)
		assert.ErrorContains(t, err, "invalid number", "%q", bad)
	}
	// Exponents of up to 9 digits are fine, leading zeros do not count.
	got, err := intent.CanonicalNumber("1e000000000000000005")
	require.NoError(t, err)
	assert.Equal(t, "100000", got)
	got, err = intent.CanonicalNumber("1e-999999999")
	require.NoError(t, err)
	assert.Equal(t, "1e-999999999", got)
	_, err = intent.CanonicalNumber("1e1000000000")
	assert.ErrorContains(t, err, "exponent out of range")
	// The range is the value's, not the written exponent's: every
	// spelling of a value is accepted or refused alike, and every
	// canonical text is read back.
	for _, s := range []string{"10e999999999", "0.1e-999999999", "1e-1000000000", "100000000000000000000e999999990", "1e1000000000000000000"} {
		_, err = intent.CanonicalNumber(s)
		assert.ErrorContains(t, err, "exponent out of range", s)
	}
	for in, want := range map[string]string{"0.01e1000000001": "1e+999999999", "1e999999999": "1e+999999999", "100e-1000000001": "1e-999999999", "-12e0000000000000000001": "-120"} {
		got, err := intent.CanonicalNumber(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		checkCanonicalNumber(t, in, got)
	}
}

// TestCanonicalNumberAllocations pins the documented cost: no allocation
// for a number that is already a canonical integer.
func TestCanonicalNumberAllocations(t *testing.T) {
	for _, s := range []string{"0", "-17", "123456789012345678901"} {
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := intent.CanonicalNumber(s); err != nil {
				panic(err)
			}
		})
		assert.Zero(t, allocs, s)
	}
}

// checkCanonicalNumber asserts what CanonicalNumber promises for in and its
// canonical text c: c is valid JSON, a fixed point, the same exact decimal
// value, read by strconv.ParseFloat as the same float64, and laid out as
// documented.
func checkCanonicalNumber(t *testing.T, in, c string) {
	t.Helper()
	require.True(t, json.Valid([]byte(c)), "%q -> %q is not JSON", in, c)
	again, err := intent.CanonicalNumber(c)
	require.NoError(t, err, c)
	require.Equal(t, c, again, "not a fixed point")
	fin, errIn := strconv.ParseFloat(in, 64)
	fc, errC := strconv.ParseFloat(c, 64)
	require.Equal(t, errIn == nil, errC == nil, "%q -> %q: ParseFloat errors %v, %v", in, c, errIn, errC)
	require.Equal(t, fin, fc, "%q -> %q: another float64", in, c)
	if exp := exponentOf(c); exp > -400 && exp < 400 { // big.Rat of 10^±1e9 would be slow
		a, ok1 := new(big.Rat).SetString(in)
		b, ok2 := new(big.Rat).SetString(c)
		require.True(t, ok1 && ok2, "%q, %q", in, c)
		require.Zero(t, a.Cmp(b), "%q -> %q: another value", in, c)
		// The same value spelled another way (plain decimal, with a
		// trailing zero) has the same canonical text.
		places := len(strings.TrimPrefix(c, "-")) - exp + 1
		plain := a.FloatString(max(1, places))
		again, err := intent.CanonicalNumber(plain)
		require.NoError(t, err, plain)
		require.Equal(t, c, again, "%q and %q have the same value", in, plain)
	}
	// Layout: no leading zeros, no trailing zeros after a point, no "-0",
	// an exponent only outside [1e-7, 1e21).
	mant, _, hasExp := strings.Cut(strings.TrimPrefix(c, "-"), "e")
	require.NotEqual(t, "-0", c)
	if len(mant) > 1 && !strings.HasPrefix(mant, "0.") {
		require.NotEqual(t, byte('0'), mant[0], "%q: leading zero", c)
	}
	if strings.Contains(mant, ".") {
		require.False(t, strings.HasSuffix(mant, "0"), "%q: trailing zero", c)
	}
	if hasExp {
		require.True(t, len(mant) == 1 || mant[1] == '.', "%q: one digit before the point", c)
	}
}

// exponentOf returns the decimal exponent written in canonical text c, or 0.
func exponentOf(c string) int {
	_, e, ok := strings.Cut(c, "e")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(e)
	if err != nil {
		return 1 << 30
	}
	return n
}

// FuzzCanonicalNumber: CanonicalNumber accepts exactly the JSON numbers
// (but for those out of range), and its text keeps the exact
// value and the float64 reading, is a fixed point and is laid out as
// documented.
func FuzzCanonicalNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.0", "1e21", "1e-7", "0.000001", "-1.5e300", "12345678901234567890123",
		"123.456e1", "0.1e1", "1E+0", "01", "1.", ".5", "1e", "+1", "1e-999999999", "1e1000000000", "9007199254740993"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 256 {
			return // long digit strings add nothing but time
		}
		c, err := intent.CanonicalNumber(s)
		isNumber := len(s) > 0 && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) && json.Valid([]byte(s)) &&
			strings.TrimSpace(s) == s
		if err != nil {
			require.ErrorIs(t, err, intent.ErrMalformed)
			if isNumber {
				require.Contains(t, err.Error(), "exponent out of range", "%q is a JSON number", s)
			}
			return
		}
		require.True(t, isNumber, "%q accepted but not a JSON number", s)
		checkCanonicalNumber(t, s, c)
	})
}
