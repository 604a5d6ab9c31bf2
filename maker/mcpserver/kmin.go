package mcpserver

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/vote/laws"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// KMinInput is the input of the kmin tool, the flags of `maker kmin`.
type KMinInput struct {
	Steps     int     `json:"steps" jsonschema:"the number of steps S of the task, at least 1" flag:"steps" usage:"number of steps S"`
	P         float64 `json:"p" jsonschema:"the per-step success rate of one valid sample, in (0.5, 1]" flag:"p" usage:"per-step success rate of one valid sample, in (0.5, 1]"`
	Target    float64 `json:"target,omitempty" jsonschema:"the target probability T that the whole task succeeds, in (0, 1); default 0.95" flag:"target" usage:"target probability T that the whole task succeeds, in (0, 1)"`
	ValidRate float64 `json:"valid_rate,omitempty" jsonschema:"the share of samples that pass the red flags, in (0, 1]; default 1" flag:"valid-rate" usage:"share of samples that pass the red flags, in (0, 1]"`
	Price     float64 `json:"price,omitempty" jsonschema:"the price of one sample, for the cost estimate; default 0" flag:"price" usage:"price of one sample, for the cost estimate"`
}

// KMinOutput is the output of the kmin tool, the keys of `maker kmin
// --json`.
type KMinOutput struct {
	Steps            int      `json:"steps" jsonschema:"the number of steps S"`
	P                float64  `json:"p" jsonschema:"the per-step success rate of one valid sample"`
	Target           float64  `json:"target" jsonschema:"the target probability that the whole task succeeds"`
	ValidRate        float64  `json:"valid_rate" jsonschema:"the share of samples that pass the red flags"`
	KMin             int      `json:"k_min" jsonschema:"the smallest margin k with p_full >= target"`
	PFull            float64  `json:"p_full" jsonschema:"the probability that every step is decided right at k_min: (1 + ((1-p)/p)^k)^(-S)"`
	PFullKMinus1     float64  `json:"p_full_k_minus_1" jsonschema:"the same at k_min - 1 (at 1 when k_min is 1)"`
	PStep            float64  `json:"p_step" jsonschema:"the probability that one step is decided right at k_min"`
	SamplesPerStep   float64  `json:"samples_per_step" jsonschema:"expected samples per step against one rival answer, divided by the valid rate"`
	SamplesTotal     float64  `json:"samples_total" jsonschema:"expected samples for the whole task"`
	PricePerSample   float64  `json:"price_per_sample" jsonschema:"the price of one sample"`
	CostPerStep      float64  `json:"cost_per_step" jsonschema:"expected cost of one step"`
	CostTotal        float64  `json:"cost_total" jsonschema:"expected cost of the whole task"`
	ExpectedFailures float64  `json:"expected_failures" jsonschema:"expected wrongly decided steps: S (1 - p_step)"`
	Log10FailureStep *float64 `json:"log10_failure_step,omitempty" jsonschema:"log10 of one step's failure probability; absent when it is 0"`
}

// KMin computes the scaling laws as `maker kmin` does: k_min for steps,
// p and target, p_full, expected samples and cost. Zero Target means
// 0.95, zero ValidRate 1. Errors wrap ErrArgument (and laws.ErrOutOfRange)
// and name the argument; a price whose total cost overflows a float64 is
// a *fielderr.Error of the field "price". Cost: O(1).
func KMin(in KMinInput) (KMinOutput, error) {
	target := or(in.Target, 0.95)
	valid := or(in.ValidRate, 1)
	k, err := laws.KMin(in.Steps, in.P, target)
	if err != nil {
		return KMinOutput{}, fmt.Errorf("%w: steps, p or target: %w", ErrArgument, err)
	}
	cost, err := laws.ExpectedCost(in.P, k, valid, in.Price)
	if err != nil {
		return KMinOutput{}, fmt.Errorf("%w: valid_rate or price: %w", ErrArgument, err)
	}
	perStep := laws.ExpectedSamples(in.P, k) / valid
	pStep := laws.PStep(in.P, k)
	out := KMinOutput{
		Steps: in.Steps, P: in.P, Target: target, ValidRate: valid,
		KMin:             k,
		PFull:            laws.PFull(in.Steps, k, in.P),
		PFullKMinus1:     laws.PFull(in.Steps, max(k-1, 1), in.P),
		PStep:            pStep,
		SamplesPerStep:   perStep,
		SamplesTotal:     perStep * float64(in.Steps),
		PricePerSample:   in.Price,
		CostPerStep:      cost,
		CostTotal:        cost * float64(in.Steps),
		ExpectedFailures: float64(in.Steps) * (1 - pStep),
	}
	if math.IsInf(out.CostTotal, 0) { // no JSON can say it
		return KMinOutput{}, &fielderr.Error{Err: ErrArgument, Config: "kmin", Fields: []fielderr.Field{{Name: "price", Value: in.Price}},
			Fix: fmt.Sprintf("the task's cost (%d steps) overflows a number; give a smaller price", in.Steps)}
	}
	if lf := math.Log10(1 - pStep); !math.IsInf(lf, 0) && !math.IsNaN(lf) {
		out.Log10FailureStep = &lf
	}
	return out, nil
}

// WriteText writes o as `maker kmin` prints it for a person: the inputs,
// k_min, p_full (and at k_min - 1), the expected samples, and the cost
// when a price was given. Cost: O(1).
func (o KMinOutput) WriteText(w io.Writer) {
	fmt.Fprintf(w, "steps %d, p %g, target %g, valid rate %g\n", o.Steps, o.P, o.Target, o.ValidRate)
	fmt.Fprintf(w, "k_min            %d\n", o.KMin)
	fmt.Fprintf(w, "p_full           %.6f (with k-1: %.6f)\n", o.PFull, o.PFullKMinus1)
	fmt.Fprintf(w, "samples per step %.4f\n", o.SamplesPerStep)
	fmt.Fprintf(w, "samples in all   %.0f\n", o.SamplesTotal)
	if o.PricePerSample > 0 {
		fmt.Fprintf(w, "cost             %.4f per step, %.2f in all\n", o.CostPerStep, o.CostTotal)
	}
}

func (s *Server) kminTool(_ context.Context, _ *mcp.CallToolRequest, in KMinInput) (*mcp.CallToolResult, KMinOutput, error) {
	out, err := KMin(in)
	return nil, out, err
}
