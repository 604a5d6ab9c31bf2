// Package intent defines what a microagent says for one step, an [Output]
// with an optional [ToolIntent], how it is parsed from a model's reply, and
// when two replies mean the same step (their [Key]).
package intent
