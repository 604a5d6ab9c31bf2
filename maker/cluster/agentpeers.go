package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

// Several agents may serve one engine (a second maker nats provision):
// they share the workers' requests (a queue group), and each holds the
// deliveries it made in its own memory. A worker's act that reaches an
// agent not holding its delivery is asked of the other agents on
// peerSubject, which only the admin identity (the agents') may publish
// or hear; the one holding it acts, with the same check that the
// delivery went to that worker, and answers. Without it the act was
// refused and the job came back after its ack wait.

// peerSubject carries an act from the agent a worker reached to the
// others.
const peerSubject = "mdap.agents.act"

// peerWait bounds an agent's wait for the agent holding a delivery: a
// delivery nobody holds (acknowledged, expired) costs its act that long.
const peerWait = time.Second

// errNoDelivery: no delivery of that handle is held by this agent.
var errNoDelivery = errors.New("no such delivery (acknowledged, expired, or never made)")

// peerAct is an act relayed between agents: the worker identity it came
// from, and the act.
type peerAct struct {
	From string     `json:"from"` // the relaying agent, which ignores its own
	ID   string     `json:"id"`
	Act  ackRequest `json:"act"`
}

// askPeers asks the other agents to do req for the worker id; it returns
// errNoDelivery when none holds the delivery.
func (a *Agent) askPeers(ctx context.Context, id string, req ackRequest) error {
	data, _ := json.Marshal(peerAct{From: a.id, ID: id, Act: req})
	ctx, cancel := context.WithTimeout(ctx, peerWait)
	defer cancel()
	m, err := a.nc.RequestWithContext(ctx, peerSubject, data)
	if err != nil {
		return errNoDelivery
	}
	var resp agentResponse
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return errNoDelivery
	}
	if resp.Error != "" {
		return errors.New(resp.Error)
	}
	return nil
}

// onPeer does another agent's relayed act if this agent holds its
// delivery, and answers; otherwise it stays silent, for the holder to
// answer.
func (a *Agent) onPeer(m *nats.Msg) {
	var p peerAct
	if !answerable(m.Reply) || json.Unmarshal(m.Data, &p) != nil || p.From == a.id {
		return
	}
	var ok bool
	if p.Act.Op == "lost" { // a pull's jobs: held by the agent that served it
		ok = a.rooms.delivered(p.ID, p.Act.Pull)
	} else {
		a.work.mu.Lock()
		_, ok = a.work.held[p.Act.Handle]
		a.work.mu.Unlock()
	}
	if !ok {
		return
	}
	var resp agentResponse
	if err := a.act(p.ID, p.Act); err != nil {
		resp.Error = err.Error()
	}
	data, _ := json.Marshal(resp)
	_ = m.Respond(data)
}
