package spec

import "github.com/mdap-go/mdap/maker"

// AnswerMatcher implements maker.Matching: the matchers the answer
// contract declares with "x-mdap-match" (see match.Annotation),
// built once by Parse; nil when it declares none (exact matching). A
// spec with annotations has another Fingerprint than the same spec
// without, so a journal of one never resumes as the other.
func (t *Task) AnswerMatcher() maker.AnswerMatcher {
	if t.spec.matcher == nil {
		return nil // exact: not a nil *match.Matcher in an interface
	}
	return t.spec.matcher
}
