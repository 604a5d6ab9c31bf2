package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Connect dials the NATS server at url for a coordinator or a worker,
// named name in the server's monitoring. The connection then reconnects
// forever, every half second, when the server goes away: work resumes when
// it is back. With several URLs (a cluster), a server that stops
// answering (a stalled node: its connection stays open, nothing comes
// back) is left for another within StallDetect, before a journal's lease
// (DefaultLeaseTTL) runs out. Asynchronous errors are printed on stderr
// as nats.go's default handler prints them, but for the engine's refusals
// of what mdap asks it by trying (the shared coordinator's request for a
// run stream of its own, on every journaled run), which are answers, not
// news (AdminContext replaces the handler with its own). opts are added
// (nats.Token for a server that requires one, TLS options,
// nats.ErrorHandler, ...). The first dial fails fast, wrapping
// ErrEngine, when nothing answers at url.
func Connect(url, name string, opts ...nats.Option) (*nats.Conn, error) {
	base := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond),
		nats.PingInterval(pingInterval),
		nats.MaxPingsOutstanding(maxPingsOutstanding),
		nats.Timeout(dialTimeout),
		nats.FlusherTimeout(writeTimeout),
		nats.ReconnectOnFlusherError(),
		nats.ErrorHandler(printAsyncErrors(os.Stderr)),
	}
	nc, err := nats.Connect(url, append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("%w: connect to %s: %w", ErrEngine, url, err)
	}
	return nc, nil
}

// A client pings its server every pingInterval and takes it for stalled
// when maxPingsOutstanding pings went unanswered (nats.go's defaults are
// 2 minutes and 2: a stalled node held a client for minutes, its lease
// lost after 10 s); dialTimeout bounds each dial, a stalled node's
// included (its kernel accepts the connection; the server never greets).
// A ping every second with two outstanding took a client pumping a flood
// on a loaded machine for stalled (TestReplyFloodStallsNoRun's rogue,
// under -race on two cores).
//
// A write to the server that blocks for writeTimeout (a stopped node
// reads nothing, and once the kernel's buffers are full a busy client's
// writes block) ends the connection, which moves to another URL: a
// blocked write holds the connection's lock, so the pings that would
// find the node stalled wait for it, and with nats.go's default (a
// minute) a coordinator sending jobs stayed on a node stopped for 20 s
// until it was back (TestBusyClientLeavesAStoppedServer).
const (
	pingInterval        = 2 * time.Second
	maxPingsOutstanding = 3
	dialTimeout         = 2 * time.Second
	writeTimeout        = 2 * pingInterval
)

// StallDetect is the longest a client of Connect stays with a server
// that stopped answering before it moves to another of its URLs: its
// unanswered pings (pingInterval times maxPingsOutstanding and one
// interval more), then a dial of the stalled server that times out.
const StallDetect = (maxPingsOutstanding+1)*pingInterval + dialTimeout

// CheckURL returns nil when raw is a server URL [Connect] can dial: one
// or several separated by commas, each with a host and the scheme nats,
// tls, ws or wss (nats://127.0.0.1:4222, as [Server.ClientURL] prints it).
// Otherwise it returns an error wrapping [ErrConfig] that names the URL.
// It checks the form only; nothing is dialled.
func CheckURL(raw string) error {
	for _, one := range strings.Split(raw, ",") {
		u, err := url.Parse(strings.TrimSpace(one))
		if err != nil || u.Host == "" || (u.Scheme != "nats" && u.Scheme != "tls" && u.Scheme != "ws" && u.Scheme != "wss") {
			return fmt.Errorf("%w: server URL %q: want nats://HOST:PORT (or tls://, ws://, wss://), several separated by commas", ErrConfig, one)
		}
	}
	return nil
}

// replicas defaults a replica count to 1.
func replicas(n int) int { return max(n, 1) }

// ensureStream finds the stream named cfg.Name and uses it as it is, or
// creates it with cfg where the client may (a server without roles; with
// roles the engine provisions the shared streams, and a client missing
// one gets ErrNotProvisioned).
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = js.Stream(ctx, cfg.Name)
		}
	}
	if noJetStream(err) {
		return nil, errNoJetStream("stream "+cfg.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: stream %s: %w", ErrEngine, cfg.Name, err)
	}
	return s, nil
}

// DefaultRunBytes bounds each shared stream of runs' data
// (JournalsStream, TasksStream, ResultsBucket) when
// ProvisionConfig.RunBytes is 0: 2 GiB, about six million journal lines
// over every run on the engine. JetStream reserves a stream's bound on
// every node holding a copy (6 GiB for the three), so a larger bound
// needs that much room in each node's store (max_file_store).
const DefaultRunBytes int64 = 2 << 30

// sampleStreamBytes bounds the memory each sample stream takes on the
// server; a publication past it is refused (and its sample drawn again).
const sampleStreamBytes = 256 << 20

// DefaultKeyJobs bounds the jobs one key may have on one route at once,
// queued or being answered (JobsStream's messages per subject: a job's
// subject is mdap.jobs.<route token>.<publisher's key>, and a job leaves
// the stream when its worker acknowledges it, after its reply), when
// ProvisionConfig.KeyJobs is 0. It bounds a key's samples in flight on a
// route: the coordinators sharing one key (a batch's machines on one run
// key) share it. A coordinator at its bound waits until one of its jobs
// is answered. Without roles each Drawer is a key of its own. The engine
// fixes the bound in force at Provision for the most routes it serves
// (ProvisionConfig.MaxRoutes), so that one key's jobs over every route
// stay within half of JobsStream: 32 at the defaults.
const DefaultKeyJobs = 64

// DefaultJobBytes bounds one job (JobsStream's largest message) when
// ProvisionConfig.JobBytes is 0: 256 KiB, a prompt of some 60,000 tokens.
// With DefaultKeyJobs a key holds at most 16 MiB of a route's jobs.
const DefaultJobBytes = 256 << 10

// dedupeWindow is how long the jobs and replies streams remember a
// message ID: a copy published again within it is acknowledged, not
// stored (ackcheck.go), so a publication is tried again only within it
// (publishTry).
const dedupeWindow = 2 * time.Minute

// jobsStreamConfig is the work queue of sample jobs: a job is removed when
// a worker acknowledges it, withdrawn by its coordinator, or expires (its
// TTL is the coordinator's timeout). Jobs live in memory: one lost to a
// server restart is asked again by its coordinator (Drawer.recover).
// Each publisher key has a subject of its own on each route, holding at
// most DefaultKeyJobs jobs (a new one past it is refused; the engine
// sets a lower bound at Provision, never while it serves) of
// at most DefaultJobBytes. A client makes it so (a server
// without roles) on every route (mdap.jobs.>); the engine provisions it
// on the subjects of the routes it serves only (Provision, ProvisionRoute),
// so that no key can queue jobs on routes of its own invention.
func jobsStreamConfig(n int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:                 JobsStream,
		Description:          "mdap sample jobs for stateless workers",
		Subjects:             []string{jobsSubject + ">"},
		Retention:            jetstream.WorkQueuePolicy,
		Storage:              jetstream.MemoryStorage,
		Replicas:             replicas(n),
		MaxAge:               time.Hour,
		MaxBytes:             sampleStreamBytes,
		MaxMsgsPerSubject:    DefaultKeyJobs,
		MaxMsgSize:           DefaultJobBytes,
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
		Duplicates:           dedupeWindow,
		AllowMsgTTL:          true,
		Metadata:             versionMetadata(),
	}
}

// repliesStreamConfig is the work queue of replies, one consumer per
// Drawer; MaxAge clears replies to coordinators that died. Replies live in
// memory, like jobs. A worker answers on mdap.replies.<token>.<job>.<its
// identity> (a Drawer's token: replyToken), and the stream stores the
// reply under mdap.replies.<token>.w.<identity> (its subject transform drops the
// job), so that each worker identity has one subject per Drawer, holding
// at most DefaultReplyKeep replies (fewer on the engine: see
// ProvisionConfig.MaxDrawers) of at most DefaultReplyBytes: a new reply
// past them, or past the stream's bytes, is refused (DiscardNew), never
// an old one dropped. So a worker flooding replies fills its own
// subjects and no other worker's, and a reply stored is delivered. A
// client makes it so (a server without roles) on every Drawer
// (mdap.replies.>); the engine provisions it on the subjects of the
// Drawers it made a reply consumer for only (Provision, and the agent's
// replies request and reconciliation: replySpace), so that no worker can
// store replies under a Drawer of its own invention. The job's id travels in the reply, and its lease
// as the message id.
func repliesStreamConfig(n int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        RepliesStream,
		Description: "mdap workers' replies to sample jobs",
		Subjects:    []string{repliesSubject + ">"},
		SubjectTransform: &jetstream.SubjectTransformConfig{
			Source:      repliesSubject + "*.*.*",
			Destination: repliesSubject + "{{wildcard(1)}}." + replyWorkerToken + ".{{wildcard(3)}}",
		},
		Retention:            jetstream.WorkQueuePolicy,
		Storage:              jetstream.MemoryStorage,
		Replicas:             replicas(n),
		MaxAge:               time.Hour,
		MaxBytes:             sampleStreamBytes,
		MaxMsgSize:           DefaultReplyBytes,
		MaxMsgsPerSubject:    DefaultReplyKeep,
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
		Duplicates:           dedupeWindow,
	}
}

// replyWorkerToken stands where a reply's job was in its stored subject,
// mdap.replies.<token>.w.<worker>: three tokens, as a reply stored
// without the transform (a stream an operator made), so voterOf reads
// both alike.
const replyWorkerToken = "w"

// DefaultReplyKeep bounds the replies one worker identity may have stored
// for one Drawer and not yet consumed (RepliesStream's messages per
// subject) when ProvisionConfig.ReplyKeep is 0. A Drawer takes its
// replies within milliseconds, so an honest worker holds none for long;
// one that answers faster than that waits a moment (roomWait) for the
// room. The engine fixes the bound in force at Provision for the most
// Drawers it serves (ProvisionConfig.MaxDrawers), so that one worker's
// replies over every Drawer stay within half of RepliesStream: 4 at the
// defaults.
const DefaultReplyKeep = 8

// DefaultReplyBytes bounds one reply (RepliesStream's largest message)
// when ProvisionConfig.ReplyBytes is 0: NATS's largest message, 1 MiB.
const DefaultReplyBytes = 1 << 20

// ensureSampleStreams creates (or finds) the jobs and replies streams.
func ensureSampleStreams(ctx context.Context, js jetstream.JetStream, n int) (jobs jetstream.Stream, err error) {
	if jobs, err = ensureStream(ctx, js, jobsStreamConfig(n)); err != nil {
		return nil, err
	}
	if _, err = ensureStream(ctx, js, repliesStreamConfig(n)); err != nil {
		return nil, err
	}
	return jobs, nil
}

// noJetStream reports whether err says the server has no JetStream.
func noJetStream(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount)
}

func errNoJetStream(what string, err error) error {
	return fmt.Errorf("%w (%s: %w): start nats-server with -js (JetStream), or use maker nats", ErrNoJetStream, what, err)
}

// fullHint says what to do about a publication refused by a full stream
// (the server's words: "maximum bytes exceeded", "maximum messages
// exceeded").
func fullHint(err error) string {
	if msg := err.Error(); strings.Contains(msg, "maximum bytes exceeded") || strings.Contains(msg, "maximum messages exceeded") || strings.Contains(msg, "maximum messages per subject exceeded") {
		return " (the stream is full: the engine's operator may purge it with the admin credential)"
	}
	return ""
}

// jobHint says what to do about a job's publication the engine refused:
// this key's jobs of the route at their bound, a job over the bound of
// one, or a full stream (fullHint).
func jobHint(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "maximum messages per subject exceeded"):
		return " (this key's jobs of the route are at the engine's bound, ProvisionConfig.KeyJobs, and are not being taken)"
	case strings.Contains(msg, "message size exceeds maximum"):
		return " (the job is larger than the engine's bound of one job, ProvisionConfig.JobBytes)"
	}
	return fullHint(err)
}
