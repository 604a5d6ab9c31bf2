package cluster

import (
	"strings"

	"github.com/mdap-go/mdap/maker"
	"github.com/tmc/langchaingo/llms"
)

// Who answered: a worker publishes its reply on its job's reply subject
// with one more token, its identity, and on a server with roles its
// permissions allow no other (ReplyPermission): the identity is its
// credential's public key, the key of its inbox (_INBOX_<key>...). So the
// identity a reply bears is the credential that answered, not a name the
// worker claims, and the Drawer hands it to the race as each sample's
// voter (maker.WorkerInfoKey, vote.Sample.Voter): vote.Config.MinVoters
// then counts distinct worker identities among the winner's votes. Two
// machines sharing one worker credential are one identity; give each its
// own (maker nats worker add). Without roles nothing is authenticated,
// and the identity is the worker's Name, as it claims it.

// replyIdentity is the identity token of a worker whose connection's
// inbox prefix is inbox and whose name is name: the key of an
// _INBOX_<key>[.<random>] prefix (a client signed in with Credentials),
// else the name made a subject token.
func replyIdentity(inbox, name string) string {
	if key, ok := strings.CutPrefix(inbox, "_INBOX_"); ok {
		key, _, _ = strings.Cut(key, ".")
		if key != "" {
			return key
		}
	}
	tok := strings.Map(func(r rune) rune {
		if r <= ' ' || r == '.' || r == '*' || r == '>' || r == 0x7f {
			return '_'
		}
		return r
	}, truncate(name, 64))
	return cmpOr(tok, "anonymous")
}

// ReplyPermission is the only subject pattern a worker whose inbox prefix
// is inbox may publish replies on: a job's reply subject
// (mdap.replies.<token>.<job>) followed by the worker's identity.
func ReplyPermission(inbox string) string {
	return repliesSubject + "*.*." + replyIdentity(inbox, "")
}

// replySubject is where a worker of identity id answers a job whose reply
// subject is replyTo.
func replySubject(replyTo, id string) string { return replyTo + "." + id }

// voterOf is the identity a reply on subject bears: the token after a
// job's reply subject mdap.replies.<token>.<job>; "" for a reply on the
// job's reply subject itself (a worker from before identities, only
// possible without roles).
func voterOf(subject string) string {
	rest, ok := strings.CutPrefix(subject, repliesSubject)
	if !ok {
		return ""
	}
	parts := strings.SplitN(rest, ".", 3)
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}

// stampVoter names voter as the worker of every choice of resp, under
// maker.WorkerInfoKey, over whatever the worker's model put there.
func stampVoter(resp *llms.ContentResponse, voter string) {
	for _, c := range resp.Choices {
		if c.GenerationInfo == nil {
			c.GenerationInfo = make(map[string]any, 1)
		}
		c.GenerationInfo[maker.WorkerInfoKey] = voter
	}
}
