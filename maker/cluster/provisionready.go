package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ProvisionAttempt bounds one attempt of ProvisionWhenReady.
const ProvisionAttempt = 5 * time.Second

// ProvisionWhenReady is Provision, tried again every ProvisionAttempt
// (after a pause of 250 ms when an attempt failed at once) until ctx
// ends: a cluster just started answers no JetStream request sent before
// its nodes elected a leader (such a request is dropped, and would wait
// out ctx whole). A refused configuration (ErrConfig) or credential
// (ErrAuth) is returned at once, not tried again; else the last
// attempt's error once ctx has ended.
func ProvisionWhenReady(ctx context.Context, js jetstream.JetStream, cfg ProvisionConfig) error {
	for {
		actx, cancel := context.WithTimeout(ctx, ProvisionAttempt)
		err := Provision(actx, js, cfg)
		cancel()
		if err == nil || ctx.Err() != nil || errors.Is(err, ErrConfig) || errors.Is(err, ErrAuth) {
			return err
		}
		select { // an error that came at once is not hammered
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Steps says how to bring up the cluster c: the command that starts each
// node, then maker nats provision with replicas min(nodes, 3), kept
// running, then how workers and coordinators sign in. Every line but the
// first is indented or a clause: it is printed as it is.
func (c StockCluster) Steps() string {
	urls := strings.Join(c.URLs, ",")
	var b strings.Builder
	fmt.Fprintf(&b, "a cluster of %d nats-server nodes in %s; start each node:\n", len(c.Configs), c.Dir)
	for _, conf := range c.Configs {
		fmt.Fprintf(&b, "  nats-server -c %s\n", conf)
	}
	fmt.Fprintf(&b, "then provision it, and keep the provisioner running:\n  maker nats provision --nats %s --nats-creds %s --replicas %d\n", urls, c.Creds, min(len(c.Configs), 3))
	if len(c.WorkerCreds) > 0 {
		fmt.Fprintf(&b, "workers: maker worker --nats %s --nats-creds %s (worker1 to worker%d)\n", urls, c.WorkerCreds[0], len(c.WorkerCreds))
	}
	fmt.Fprintf(&b, "coordinators: --nats %s --nats-creds %s\n", urls, c.Creds)
	return b.String()
}
