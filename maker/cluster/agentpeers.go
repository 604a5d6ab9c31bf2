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

// newsSubject carries what an agent tells the others without an answer
// (peerNews), admin's only as peerSubject is.
const newsSubject = "mdap.agents.news"

// peerNews is what one agent tells the others of a job (by its stream
// sequence): that it delivered the job again, which supersedes a
// delivery another agent made (deliveries.supersede: review19, a stale
// act through the agent that made the earlier delivery), or that its
// coordinator withdrew it through this agent, which the agent holding
// its delivery must know to answer its worker's progress report
// (rooms.withdrawn: review19, a withdrawal through one agent of two left
// the other's worker calling the model).
type peerNews struct {
	From      string `json:"from"`
	Delivered uint64 `json:"delivered,omitempty"`
	Count     uint64 `json:"count,omitempty"` // Delivered's delivery count
	Withdrawn uint64 `json:"withdrawn,omitempty"`
	// Keeps: what the agent keeps of jobs handed back with a delay, all
	// of it (an empty map: nothing), for the others to hand it the
	// pulls that may take them (handoffpeers.go).
	Keeps *keptRoutes `json:"keeps,omitempty"`
}

// tell publishes news to the other agents; best effort (an agent that
// misses it acts as before the news existed).
func (a *Agent) tell(n peerNews) {
	n.From = a.id
	data, _ := json.Marshal(n)
	_ = a.nc.Publish(newsSubject, data)
}

// onNews takes another agent's news.
func (a *Agent) onNews(m *nats.Msg) {
	var n peerNews
	if json.Unmarshal(m.Data, &n) != nil || n.From == a.id {
		return
	}
	if n.Delivered != 0 {
		a.work.mu.Lock()
		a.work.supersede(n.Delivered, n.Count)
		a.work.mu.Unlock()
		a.handoffs.supersede(n.Delivered, n.Count)
	}
	if n.Withdrawn != 0 {
		a.rooms.withdrawn(n.Withdrawn, time.Now())
		a.handoffs.drop(n.Withdrawn)
	}
	if n.Keeps != nil {
		a.peerKeeps.set(n.From, *n.Keeps, time.Now())
	}
}

// peerWait bounds an agent's wait for the agent holding a delivery: a
// delivery nobody holds (acknowledged, expired) costs its act that long.
const peerWait = time.Second

// errNoDelivery: no delivery of that handle is held by this agent.
var errNoDelivery = errors.New("no such delivery (acknowledged, expired, or never made)")

// errSuperseded: the delivery's job was delivered again since (its ack
// wait passed): the act is booked as late, and the job left to its next
// holder. Not asked of the other agents: this one held the delivery.
var errSuperseded = errors.New("the job was delivered again since (its ack wait passed): this delivery is no longer the worker's")

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
