// Package match is answer matching: when two answers of a step mean the
// same though their canonical forms differ, as an answer schema declares
// per field with the "x-mdap-match" annotation (Annotation): text after
// normalisation, an array as a multiset, numbers within a tolerance, code
// after a normaliser (Go's built in: NormalGo), strings whose embeddings
// are close (an Embedder), a value a Judge says means the same.
//
// New builds a Matcher from a schema once; the step loop uses it through
// the maker.AnswerMatcher seam (a task returns it from
// maker.Matching.AnswerMatcher), keying each answer by its normal form and,
// for a tolerance, an embedding or a judge, racing with vote.RaceChoosing
// (Matcher.Choose). The core keeps exact
// matching (intent.Key); this package, and its golang.org/x/text
// dependency, are only for tasks that declare matchers. docs/matching.md
// has the rules.
package match
