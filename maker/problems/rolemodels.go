package problems

import (
	"slices"
	"strings"

	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker/decompose"
	"github.com/mdap-go/mdap/maker/models"
	"github.com/mdap-go/mdap/maker/models/all"
	"github.com/tmc/langchaingo/llms"
)

// RoleModels are the model specs of a decomposition's roles: Models
// plays every role, Roles[r] the role r over it. A list of several specs
// is an ensemble. The spec "sim" is the simulated model, which plays
// every role or none: it plays from the family's truth, so it cannot
// share a tree with a real model.
type RoleModels struct {
	// Models are the specs of every role without one in Roles.
	Models []string `flag:"model" usage:"model of every role: {specs}; give it several times for an ensemble (samples go to the models in turn). sim plays every role from the family's truth"`
	// Roles are roles' own specs, over Models.
	Roles map[decompose.Role][]string
}

// Of is the specs role r plays: Roles[r], else Models.
func (m RoleModels) Of(r decompose.Role) []string {
	if specs := m.Roles[r]; len(specs) > 0 {
		return specs
	}
	return m.Models
}

// Sim says whether the simulated model plays every role (each role's
// specs are "sim" alone, or empty).
func (m RoleModels) Sim() bool {
	for _, r := range decompose.Roles {
		if slices.ContainsFunc(m.Of(r), func(s string) bool { return s != "sim" }) {
			return false
		}
	}
	return true
}

// Validate refuses specs that cannot run, cheaply (nothing is opened): a
// spec that is not one (models.CheckSpec), and the simulated model in a
// role while another role, or the same one, has a real model. Errors are
// *fielderr.Error naming "Models" or "Roles[ROLE]" (ROLE a role's name),
// for a caller that maps the fields to its own settings.
func (m RoleModels) Validate() error {
	for _, r := range decompose.Roles {
		for _, s := range m.Roles[r] {
			if err := models.CheckSpec(s); err != nil {
				return fielderr.Of(roleModelsConfig, roleField(r), s, err)
			}
		}
	}
	for _, s := range m.Models {
		if err := models.CheckSpec(s); err != nil {
			return fielderr.Of(roleModelsConfig, "Models", s, err)
		}
	}
	if m.Sim() {
		return nil
	}
	for _, r := range decompose.Roles {
		if len(m.Roles[r]) > 0 && slices.Contains(m.Roles[r], "sim") {
			return fielderr.New(roleModelsConfig, roleField(r), "sim", "the simulated model plays every role or none; give the "+string(r)+" role a real model too")
		}
	}
	for _, r := range decompose.Roles {
		if len(m.Roles[r]) == 0 && slices.Contains(m.Models, "sim") {
			fe := fielderr.New(roleModelsConfig, "Models", "sim", "the simulated model plays every role or none; give every role a real model")
			if real := m.realRole(); real != "" {
				fe.Fields = append(fe.Fields, fielderr.Field{Name: roleField(real), Value: strings.Join(m.Roles[real], ", ")})
			}
			return fe
		}
	}
	return nil
}

// realRole is the first role with real specs of its own, or "".
func (m RoleModels) realRole() decompose.Role {
	for _, r := range decompose.Roles {
		if len(m.Roles[r]) > 0 && !slices.Contains(m.Roles[r], "sim") {
			return r
		}
	}
	return ""
}

// Open validates the specs and opens each role's models
// (all.Open with o; the roles that play the same specs share one
// model). It returns nil and no error when the simulated model plays
// every role: the caller builds it (decompose.NewSim, Options.Sim).
// Opening makes no call. Errors are Validate's, or a *fielderr.Error of
// the role's field wrapping all.Open's error (a missing API key).
func (m RoleModels) Open(o models.Options) (map[decompose.Role]llms.Model, error) {
	if err := m.Validate(); err != nil || m.Sim() {
		return nil, err
	}
	out := map[decompose.Role]llms.Model{}
	opened := map[string]llms.Model{}
	for _, r := range decompose.Roles {
		specs := m.Of(r)
		key := strings.Join(specs, "\x00")
		if opened[key] == nil {
			model, err := all.Open(specs, o)
			if err != nil {
				field := "Models"
				if len(m.Roles[r]) > 0 {
					field = roleField(r)
				}
				return nil, fielderr.Of(roleModelsConfig, field, strings.Join(specs, ", "), err)
			}
			opened[key] = model
		}
		out[r] = opened[key]
	}
	return out, nil
}

// roleModelsConfig names RoleModels in its errors.
const roleModelsConfig = "problems.RoleModels"

func roleField(r decompose.Role) string { return "Roles[" + string(r) + "]" }
