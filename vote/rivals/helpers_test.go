package rivals

// splitmix is SplitMix64's finaliser: a good 64-bit mixer.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// hash3 mixes three words: randomness per (seed, step, sample index), never
// from shared state.
func hash3(a, b, c uint64) uint64 { return splitmix(splitmix(splitmix(a)^b) ^ c) }

// unitFloat maps h to [0, 1).
func unitFloat(h uint64) float64 { return float64(h>>11) / (1 << 53) }
