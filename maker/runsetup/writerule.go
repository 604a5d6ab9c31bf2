package runsetup

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mdap-go/mdap/categories"
	"github.com/mdap-go/mdap/internal/fielderr"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/vote"
)

// writeRuleName is where ParseWriteRule's field errors come from.
const writeRuleName = "runsetup.WriteRule"

// ParseWriteRule reads a write rule (maker.WriteRule) from its text
// form: each of margins is K, the margin for every category, or
// CATEGORY=K, one side-effect category's (a category not read-only); K
// is 1 to vote.MaxK. anyMargin turns the rule off, and then no margin may
// be given.
//
// Errors: a *fielderr.Error wrapping fielderr.ErrConfig, naming the
// refused text as the field Margins[i] (or Margins and AnyMargin, with nil
// values, given together): a margin that is not a number in range, a
// category unknown or read-only, the margin of every category or of one
// category given twice. Cost: linear in margins.
func ParseWriteRule(margins []string, anyMargin bool) (maker.WriteRule, error) {
	w := maker.WriteRule{AnyMargin: anyMargin}
	if anyMargin && len(margins) > 0 {
		return w, &fielderr.Error{Config: writeRuleName, Fields: []fielderr.Field{{Name: "Margins"}, {Name: "AnyMargin"}},
			Fix: "the margin of a rule that is off means nothing; give one"}
	}
	for i, v := range margins {
		refuse := func(format string, a ...any) error {
			return fielderr.New(writeRuleName, fmt.Sprintf("Margins[%d]", i), v, fmt.Sprintf(format, a...))
		}
		cat, num, perCat := strings.Cut(v, "=")
		if !perCat {
			num = cat
		}
		k, err := strconv.Atoi(strings.TrimSpace(num))
		if err != nil || k < 1 || k > vote.MaxK {
			return w, refuse("the margin is a number from 1 to %d (K, or CATEGORY=K)", vote.MaxK)
		}
		if !perCat {
			if w.K != 0 {
				return w, refuse("the margin for every category is given twice")
			}
			w.K = k
			continue
		}
		c, err := categories.ParseCategory(cat)
		if err != nil || c.ReadOnly() {
			return w, refuse("%q is not a category with side effects: use one of %s", cat, SideEffectCategories())
		}
		if _, dup := w.Categories[c]; dup {
			return w, refuse("category %s is given twice", c)
		}
		if w.Categories == nil {
			w.Categories = map[categories.Category]int{}
		}
		w.Categories[c] = k
	}
	return w, nil
}

// SideEffectCategories names the categories with side effects (not
// read-only), comma-separated, in categories.All's order.
func SideEffectCategories() string {
	var names []string
	for _, c := range categories.All() {
		if !c.ReadOnly() {
			names = append(names, string(c))
		}
	}
	return strings.Join(names, ", ")
}
