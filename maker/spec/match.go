package spec

import "github.com/mdap-go/mdap/intent"

// AnswerMatcher implements maker.Matching: the matchers the answer
// contract declares with "x-mdap-match" (see intent.MatchAnnotation),
// built once by Parse; nil when it declares none (exact matching). A
// spec with annotations has another Fingerprint than the same spec
// without, so a journal of one never resumes as the other.
func (t *Task) AnswerMatcher() *intent.Matcher { return t.spec.matcher }
