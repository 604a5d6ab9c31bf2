package categories

import (
	"fmt"
	"slices"
	"strings"
)

// Policy says which tools may run. It allows exactly what it lists: the
// categories of Categories and the tools of Allow, minus the categories of
// DenyCategories and the tools of Deny. Deny beats allow: a tool denied by
// name or by category never runs, whatever Categories or Allow say. The
// index tool ([IndexTool]) is always allowed and cannot be denied.
//
// The zero value allows nothing but the index tool; [DefaultPolicy] is what
// a run uses when nothing else is chosen. Denied categories stay
// categories: a tool added to the taxonomy later in a denied category is
// denied too.
//
// A Policy is a value: its methods do not change it, and it is safe to share
// once built (as long as nobody changes its slices).
type Policy struct {
	// Categories are the allowed categories.
	Categories []Category `json:"categories"`
	// Allow lists tools allowed whatever their category.
	Allow []string `json:"allow,omitempty"`
	// DenyCategories lists categories whose tools are refused whatever
	// Categories or Allow say.
	DenyCategories []Category `json:"deny_categories,omitempty"`
	// Deny lists tools refused whatever their category or Allow says.
	Deny []string `json:"deny,omitempty"`
}

// DefaultPolicy returns the read-only policy: file_read, search and
// semantic_search, nothing else. It is what an empty --tools selection
// means. The caller owns the returned slices.
func DefaultPolicy() Policy { return Policy{Categories: ReadOnly()} }

// AllowedCategories returns the categories this policy allows as a whole:
// those of Categories that DenyCategories does not name, in order, once
// each. The caller owns the returned slice.
func (p Policy) AllowedCategories() []Category {
	var out []Category
	for _, c := range p.Categories {
		if !slices.Contains(p.DenyCategories, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// AllowsCategory reports whether the policy allows category c as a whole
// (see [Policy.AllowedCategories]).
func (p Policy) AllowsCategory(c Category) bool {
	return slices.Contains(p.Categories, c) && !slices.Contains(p.DenyCategories, c)
}

// Allows answers whether tool e may run. It returns nil for yes; for no, an
// error wrapping [ErrDenied] whose message names the tool, its category and
// how an operator allows it, worded so that a model reading it in its next
// prompt understands why the call did not run. Cost: linear in the lengths
// of the policy's lists.
func (p Policy) Allows(e Entry) error {
	if e.Name == IndexTool && e.Category == "" {
		return nil
	}
	switch {
	case slices.Contains(p.Deny, e.Name):
		return fmt.Errorf("%w: tool %q is denied by name in this run's policy; an operator can remove it from the deny list", ErrDenied, e.Name)
	case slices.Contains(p.DenyCategories, e.Category):
		return fmt.Errorf("%w: tool %q is in category %s, which this run's policy denies; an operator can remove -%s from --tools", ErrDenied, e.Name, e.Category, e.Category)
	case slices.Contains(p.Allow, e.Name):
		return nil
	case p.AllowsCategory(e.Category):
		return nil
	}
	nature := "has side effects"
	if e.ReadOnly() {
		nature = "is read-only"
	}
	allowed := joinCategories(p.AllowedCategories())
	if allowed == "" {
		allowed = "no category"
	}
	// The advice keeps what is allowed now: a --tools selection replaces
	// the default, so "--tools file_write" alone would withhold file_read.
	keep := p.String()
	if keep == "none" {
		keep = ""
	} else {
		keep += ","
	}
	return fmt.Errorf("%w: tool %q is in category %s, which %s and is not allowed in this run (allowed: %s); an operator can allow it with --tools %s%s (the category) or --tools %s%s (this tool only)",
		ErrDenied, e.Name, e.Category, nature, allowed, keep, e.Category, keep, e.Name)
}

// String renders the policy as a --tools selection that
// package categories/selection reads back into an equal policy: the allowed
// categories, the allowed tools, then "-category" and "-tool" for what is
// denied; "none" for a policy that lists nothing.
func (p Policy) String() string {
	var words []string
	for _, c := range p.Categories {
		words = append(words, string(c))
	}
	words = append(words, p.Allow...)
	for _, c := range p.DenyCategories {
		words = append(words, "-"+string(c))
	}
	for _, d := range p.Deny {
		words = append(words, "-"+d)
	}
	if len(words) == 0 {
		return "none"
	}
	return strings.Join(words, ",")
}
