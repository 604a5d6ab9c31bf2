// Package benchmarks holds consensus-cost experiments: Go benchmarks that
// run whole tasks on the simulated model and report cost per step (time,
// samples, allocations) and the memory a run keeps, so that ratios between
// sizes, measured in one run, show how cost scales.
//
//	go test -run '^$' -bench . -benchmem ./benchmarks/
package benchmarks
