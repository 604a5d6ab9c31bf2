// Package runsetup checks and opens what a run's settings name before the
// run starts: its models' specs, checked all at once without opening a
// client ([Models.Check]), and its journal file, created, resumed or
// either ([Journal.Open]); and holds a run's settings apart from what
// runs it, as a command line gives them ([Settings], [Guards]), each
// field tagged with its flag (internal/flagbind), each checking itself. A
// command binds these settings to its flags and maps their field errors
// back to its flags (fielderr.InFlags). [Run] opens a run's models from
// such settings: its own, its escalation policy's, a batch's; and
// [Run.Solver] builds a run's Solver of them, checked, with its journal.
package runsetup

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/models"
	_ "github.com/mdap-go/mdap/maker/models/all" // every provider a spec may name
)

// MaxPrice bounds a price in dollars per million tokens, against typos.
const MaxPrice = 1e6

// Models are a run's model settings: the specs (models.ParseSpec's forms,
// each with its own ;base=, ;key=, ;rpm=, ;inflight=), the server URL of
// those without ;base=, whether the answer's schema is sent (Structured),
// and the price of a model that does not know its own.
type Models struct {
	Specs       []string
	BaseURL     string
	Structured  bool
	InputPrice  float64
	OutputPrice float64
}

// SpecsFrom are the --model specs a shell completes from prefix: sim,
// each registered provider's "NAME:", and the models of the built-in
// price table (models.KnownModels), those beginning with prefix.
func SpecsFrom(prefix string) []string {
	all := []string{"sim"}
	for _, p := range models.Providers() {
		all = append(all, p+":")
	}
	var match []string
	for _, s := range append(all, models.KnownModels()...) {
		if strings.HasPrefix(s, prefix) {
			match = append(match, s)
		}
	}
	return match
}

// modelsName is where Models' field errors come from.
const modelsName = "runsetup.Models"

// Check refuses what no run could use, before any client is built: no
// spec; a BaseURL or a price out of range (0 to [MaxPrice]); a spec that
// does not parse, the limits rpm= and inflight= or Structured with the
// simulated model, a real model whose server URL (its ;base=, BaseURL or
// its provider's environment variable) no client could use, or
// Structured with anthropic: (langchaingo has no structured output
// there).
//
// Errors: a *fielderr.Error wrapping fielderr.ErrConfig, naming the
// fields (Specs[i] and its spec, BaseURL without a password it holds,
// InputPrice, OutputPrice, and Structured with a nil value) and how to fix them; a refused spec or URL
// also wraps models.ErrSpec. Cost: one parse per spec; no I/O but the
// environment.
func (m Models) Check() error {
	if len(m.Specs) == 0 {
		return fielderr.New(modelsName, "Specs", "", "give a model: "+models.Specs)
	}
	if m.BaseURL != "" {
		if err := models.CheckBaseURL("", m.BaseURL); err != nil {
			return fielderr.Of(modelsName, "BaseURL", shown(m.BaseURL), err)
		}
	}
	for _, p := range []struct {
		name  string
		value float64
	}{{"InputPrice", m.InputPrice}, {"OutputPrice", m.OutputPrice}} {
		if !(p.value >= 0 && p.value <= MaxPrice) {
			return fielderr.New(modelsName, p.name, p.value, fmt.Sprintf("use dollars per million tokens, from 0 to %g", float64(MaxPrice)))
		}
	}
	for i, spec := range m.Specs {
		if err := m.checkSpec(fmt.Sprintf("Specs[%d]", i), spec); err != nil {
			return err
		}
	}
	return nil
}

// checkSpec is Check of one spec, the field name.
func (m Models) checkSpec(name, spec string) error {
	head, o, err := models.SplitEndpoint(spec, models.Options{BaseURL: m.BaseURL})
	if err != nil {
		return fielderr.Of(modelsName, name, spec, err)
	}
	sp, err := models.ParseSpec(head)
	if err != nil {
		return fielderr.Of(modelsName, name, spec, err)
	}
	structured := fielderr.Field{Name: "Structured"}
	if sp.Provider == "sim" {
		switch {
		case o.ModelRPM > 0 || o.ModelInFlight > 0:
			return fielderr.New(modelsName, name, spec, "rpm= and inflight= limit a served model; the simulated model has none")
		case m.Structured:
			return &fielderr.Error{Config: modelsName, Fields: []fielderr.Field{structured}, Fix: "applies to a real model (openai: or ollama:); the simulated model answers in the task's format already"}
		}
		return nil
	}
	if _, source, err := models.BaseURL(sp.Provider, o.BaseURL); err != nil {
		if source == "--base-url" {
			return fielderr.Of(modelsName, "BaseURL", shown(o.BaseURL), err)
		}
		return fielderr.Of(modelsName, name, spec, err)
	}
	if m.Structured && sp.Provider == "anthropic" {
		return &fielderr.Error{Config: modelsName, Fields: []fielderr.Field{structured, {Name: name, Value: spec}},
			Fix: "langchaingo v0.1.14 has no structured output for anthropic: models; turn structured output off"}
	}
	return nil
}

// shown is a URL as an error may show it: without a password (nil when
// it does not parse, which could hide one).
func shown(raw string) any {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	u.User = nil
	return u.String()
}
