package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
)

// EngineProtocol is the version of the protocol between the engine and
// its clients this build speaks: the subjects of jobs (one a route and
// publisher key), replies and the agent's requests (a worker's naming its
// key), and the Job and Reply formats (WireVersion). The engine publishes
// it in JobsStream's metadata (protocolKey, with WireVersion under
// wireKey), and a Drawer or Worker reads it at its setup: one of another
// protocol fails at once with ErrVersion, naming both and what to
// upgrade, instead of publishing jobs no consumer takes or requests no
// permission allows and waiting out its timeout. An engine's job stream
// without it (its subjects include mdap.jobs._) was provisioned by an mdap
// older than this field (protocol 0) and is refused; an operator's own
// stream without it (on mdap.jobs.>, a server without roles) is used as
// it is. An engine older still (its stream on mdap.jobs.>) is not named.
// Protocol 2: a Drawer's replies travel under its token (replyToken), not
// its reply consumer's name, and only the engine deletes that consumer.
// Protocol 3: a reply to a job delivered through the agent is stored
// under the job's lease and the delivery's handle (replyMsgID), which the
// agent's check of an acknowledgement looks up.
const EngineProtocol = 3

// The metadata keys of JobsStream naming the engine's protocol and wire
// version.
const (
	protocolKey = "mdap.protocol"
	wireKey     = "mdap.wire"
)

// ErrVersion: the engine speaks another protocol than this client (see
// EngineProtocol). The message names both versions and what to upgrade.
var ErrVersion = errors.New("the engine and this client speak different mdap protocols")

// versionMetadata is JobsStream's metadata naming this build's protocol.
func versionMetadata() map[string]string {
	return map[string]string{protocolKey: strconv.Itoa(EngineProtocol), wireKey: strconv.Itoa(WireVersion)}
}

// checkProtocol refuses a job stream whose metadata names another
// protocol than EngineProtocol (or none: an older engine). who names the
// client ("coordinator", "worker") for the message.
func checkProtocol(info *jetstream.StreamInfo, who string) error {
	if info == nil {
		return nil
	}
	meta := info.Config.Metadata
	theirs, err := strconv.Atoi(meta[protocolKey])
	if err != nil {
		// No protocol named: an engine's stream (its subjects include
		// noRoute) from before the engine named it, or an operator's own
		// stream (mdap.jobs.>, a server without roles), used as it is.
		if !slices.Contains(info.Config.Subjects, noRoute) {
			return nil
		}
		theirs = 0
	}
	if theirs == EngineProtocol {
		return nil
	}
	wire := meta[wireKey]
	if wire == "" {
		wire = "unnamed"
	}
	fix := "upgrade the engine (maker nats, or maker nats provision on a stock server, and its workers) to this mdap"
	if theirs > EngineProtocol {
		fix = "upgrade this " + who + " to the engine's mdap"
	}
	return fmt.Errorf("%w: the engine's %s speaks protocol %d (wire %s), this %s protocol %d (wire %d): %s; on a server without roles, where the first client made the stream, delete it (nats stream rm %s) for the next client to make it again (a restart of the server does so only when the job stream lives in memory, not on disk as with maker nats provision --durable)",
		ErrVersion, JobsStream, theirs, wire, who, EngineProtocol, WireVersion, fix, JobsStream)
}

// checkEngineProtocol reads JobsStream's metadata and refuses an engine
// of another protocol (checkProtocol). A stream not found is no news here
// (the caller's setup says what is missing).
func checkEngineProtocol(ctx context.Context, js jetstream.JetStream, who string) error {
	st, err := js.Stream(ctx, JobsStream)
	if err != nil {
		return nil //nolint:nilerr // the setup that follows reports a missing or unreachable stream
	}
	return checkProtocol(st.CachedInfo(), who)
}
