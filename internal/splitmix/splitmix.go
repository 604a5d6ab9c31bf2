// Package splitmix is the SplitMix64 mixing function that mdap's
// reproducible draws (the simulated model, serve-sim's faults) hash their
// seeds with.
package splitmix

// Mix returns SplitMix64's output for state x (Steele, Lea and Flood,
// 2014): a bijection on 64 bits whose outputs for consecutive inputs pass
// BigCrush. Cost: O(1), no allocation.
func Mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
