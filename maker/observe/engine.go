package observe

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The metrics of a NATS engine (maker nats --metrics-addr), served as
// mdap_engine_*: see docs/observe.md.
const (
	// MetricEngineStreamMessages is what each engine stream holds, by
	// stream (MDAP_JOBS: jobs queued or held; KV_MDAP_LEASES: leases).
	MetricEngineStreamMessages = "mdap.engine.stream.messages"
	// MetricEngineStreamBytes is each engine stream's size, by stream.
	MetricEngineStreamBytes = "mdap.engine.stream.bytes"
	// MetricEngineStreamConsumers is each stream's consumers (of
	// MDAP_JOBS: routes served; of MDAP_REPLIES: coordinators).
	MetricEngineStreamConsumers = "mdap.engine.stream.consumers"
	// MetricEngineUndelivered is the messages a stream's consumers have
	// not delivered yet, by stream.
	MetricEngineUndelivered = "mdap.engine.consumer.undelivered"
	// MetricEngineAckPending is the messages delivered and not yet
	// acknowledged, by stream (MDAP_JOBS: jobs workers hold).
	MetricEngineAckPending = "mdap.engine.consumer.ack_pending"
	// MetricEngineWaiting is the pull requests waiting, by stream
	// (MDAP_JOBS: workers with a free place).
	MetricEngineWaiting = "mdap.engine.consumer.waiting"
	// MetricEngineConnections is the clients connected.
	MetricEngineConnections = "mdap.engine.connections"
	// MetricEngineWorkers is the worker identities that pulled jobs in
	// the last 30 seconds.
	MetricEngineWorkers = "mdap.engine.workers"
	// MetricEngineRequests counts the engine agent's answers, by outcome:
	// served, refused.
	MetricEngineRequests = "mdap.engine.requests"
)

// EngineFigures is a NATS engine's state, as ObserveEngine reports it.
type EngineFigures struct {
	// Streams by name.
	Streams map[string]StreamFigures
	// Connections are the clients connected; Workers the worker
	// identities that pulled jobs in the last 30 seconds.
	Connections, Workers int64
	// Served and Refused count the agent's answers so far.
	Served, Refused int64
}

// StreamFigures is one engine stream's state and its consumers'.
type StreamFigures struct {
	Messages, Bytes, Consumers       int64
	Undelivered, AckPending, Waiting int64
}

// ObserveEngine reports a NATS engine's state at each collection (each
// scrape of /metrics): read gets a context bounded to a second and
// returns false when the state is unknown (nothing is reported then).
// read is called once per collection. No-op with metrics off.
//
// Errors: the meter's, when an instrument or the callback could not be
// registered.
func (w *Watcher) ObserveEngine(read func(context.Context) (EngineFigures, bool)) error {
	if w == nil || w.m == nil {
		return nil
	}
	m := w.m.meter
	type gauge struct {
		name, unit, desc string
		of               func(StreamFigures) int64
		g                metric.Int64ObservableGauge
	}
	gauges := []*gauge{
		{name: MetricEngineStreamMessages, unit: "{message}", desc: "Messages an engine stream holds (MDAP_JOBS: jobs queued or held by a worker; KV_MDAP_LEASES: leases held).", of: func(s StreamFigures) int64 { return s.Messages }},
		{name: MetricEngineStreamBytes, unit: "By", desc: "Bytes an engine stream holds.", of: func(s StreamFigures) int64 { return s.Bytes }},
		{name: MetricEngineStreamConsumers, unit: "{consumer}", desc: "An engine stream's consumers (MDAP_JOBS: one per route; MDAP_REPLIES: one per coordinator).", of: func(s StreamFigures) int64 { return s.Consumers }},
		{name: MetricEngineUndelivered, unit: "{message}", desc: "Messages an engine stream's consumers have not delivered yet (MDAP_JOBS: jobs no worker took yet).", of: func(s StreamFigures) int64 { return s.Undelivered }},
		{name: MetricEngineAckPending, unit: "{message}", desc: "Messages delivered and not yet acknowledged (MDAP_JOBS: jobs workers hold, or a dead worker's awaiting redelivery).", of: func(s StreamFigures) int64 { return s.AckPending }},
		{name: MetricEngineWaiting, unit: "{request}", desc: "Pull requests waiting on an engine stream's consumers (MDAP_JOBS: workers with a free place).", of: func(s StreamFigures) int64 { return s.Waiting }},
	}
	var observables []metric.Observable
	for _, g := range gauges {
		var err error
		if g.g, err = m.Int64ObservableGauge(g.name, metric.WithUnit(g.unit), metric.WithDescription(g.desc)); err != nil {
			return err
		}
		observables = append(observables, g.g)
	}
	conns, err := m.Int64ObservableGauge(MetricEngineConnections, metric.WithUnit("{connection}"), metric.WithDescription("Clients connected to the engine."))
	if err != nil {
		return err
	}
	workers, err := m.Int64ObservableGauge(MetricEngineWorkers, metric.WithUnit("{worker}"), metric.WithDescription("Worker identities (credentials) that pulled jobs through the engine's agent in the last 30 seconds."))
	if err != nil {
		return err
	}
	requests, err := m.Int64ObservableCounter(MetricEngineRequests, metric.WithUnit("{request}"), metric.WithDescription("Requests the engine's agent answered, by outcome: served, refused."))
	if err != nil {
		return err
	}
	observables = append(observables, conns, workers, requests)
	served, refused := metric.WithAttributes(attribute.String("outcome", "served")), metric.WithAttributes(attribute.String("outcome", "refused"))
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		f, ok := read(rctx)
		if !ok {
			return nil
		}
		for name, s := range f.Streams {
			at := metric.WithAttributes(attribute.String("stream", name))
			for _, g := range gauges {
				o.ObserveInt64(g.g, g.of(s), at)
			}
		}
		o.ObserveInt64(conns, f.Connections)
		o.ObserveInt64(workers, f.Workers)
		o.ObserveInt64(requests, f.Served, served)
		o.ObserveInt64(requests, f.Refused, refused)
		return nil
	}, observables...)
	return err
}
