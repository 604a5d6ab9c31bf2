package categories

import (
	"fmt"
	"slices"
	"strings"
)

// Policy says which tools may run: the allowed categories, plus explicit
// per-tool allow and deny lists. Deny beats Allow, and Allow beats the
// category. The index tool is always allowed.
//
// The zero value allows exactly the read-only categories ([ReadOnly]), which
// is also what [DefaultPolicy] returns. A Policy is a value; it is safe to
// share once built.
type Policy struct {
	// Categories are the allowed categories. Nil means ReadOnly(); a
	// non-nil empty slice allows no category at all.
	Categories []Category `json:"categories"`
	// Allow lists tools allowed whatever their category.
	Allow []string `json:"allow,omitempty"`
	// Deny lists tools refused whatever their category or Allow says.
	Deny []string `json:"deny,omitempty"`
}

// DefaultPolicy returns the read-only policy: file_read, search and
// semantic_search, nothing else.
func DefaultPolicy() Policy { return Policy{Categories: ReadOnly()} }

// AllowedCategories returns the categories this policy allows, resolving the
// zero value to [ReadOnly].
func (p Policy) AllowedCategories() []Category {
	if p.Categories == nil {
		return ReadOnly()
	}
	return slices.Clone(p.Categories)
}

// AllowsCategory reports whether the policy allows category c as a whole.
func (p Policy) AllowsCategory(c Category) bool {
	return slices.Contains(p.AllowedCategories(), c)
}

// Allows answers whether tool e may run. It returns nil for yes; for no, an
// error wrapping [ErrDenied] whose message names the tool, its category and
// how an operator allows it, worded so that a model reading it in its next
// prompt understands why the call did not run.
func (p Policy) Allows(e Entry) error {
	if e.Name == IndexTool && e.Category == "" {
		return nil
	}
	switch {
	case slices.Contains(p.Deny, e.Name):
		return fmt.Errorf("%w: tool %q is denied by name in this run's policy; an operator can remove it from the deny list", ErrDenied, e.Name)
	case slices.Contains(p.Allow, e.Name):
		return nil
	case p.AllowsCategory(e.Category):
		return nil
	}
	nature := "has side effects"
	if e.ReadOnly() {
		nature = "is read-only"
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
		ErrDenied, e.Name, e.Category, nature, joinCategories(p.AllowedCategories()), keep, e.Category, keep, e.Name)
}

// String renders the policy as a --tools selection that ParseSelection reads
// back.
func (p Policy) String() string {
	var words []string
	for _, c := range p.AllowedCategories() {
		words = append(words, string(c))
	}
	words = append(words, p.Allow...)
	for _, d := range p.Deny {
		words = append(words, "-"+d)
	}
	if len(words) == 0 {
		return "none"
	}
	return strings.Join(words, ",")
}

// ParseSelection reads a --tools list: comma-separated category and tool
// names alike, for example "file_read,search,grep". A category name allows
// the category, a tool name allows that tool, and a name with a leading '-'
// denies that tool (or every tool of that category). Two words have a special
// meaning: "read_only" (the read-only categories) and "none" (nothing but the
// index tool). An empty or blank selection is the default policy.
//
// The selection replaces the default: "file_write" alone allows file_write
// and not file_read. An unknown word is an error wrapping [ErrUnknownName]
// that lists every valid name.
func (t *Taxonomy) ParseSelection(s string) (Policy, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultPolicy(), nil
	}
	p := Policy{Categories: []Category{}}
	for _, raw := range strings.Split(s, ",") {
		word := strings.TrimSpace(raw)
		deny := strings.HasPrefix(word, "-")
		word = strings.TrimPrefix(word, "-")
		switch {
		case word == "":
			continue
		case word == "none" && !deny:
			// Nothing to add: the policy starts empty.
		case word == "read_only" && !deny:
			p.Categories = appendNew(p.Categories, readOnly...)
		case Category(word).Valid():
			if deny {
				for _, e := range t.Tools() {
					if e.Category == Category(word) {
						p.Deny = appendNew(p.Deny, e.Name)
					}
				}
			} else {
				p.Categories = appendNew(p.Categories, Category(word))
			}
		case word == IndexTool:
			if deny {
				return Policy{}, fmt.Errorf("%w: %s cannot be denied: it is how a model learns what it may use", ErrReservedName, IndexTool)
			}
		default:
			if _, ok := t.Lookup(word); !ok {
				return Policy{}, fmt.Errorf("%w: %q in --tools %q; valid names: read_only, none, %s", ErrUnknownName, word, s, strings.Join(t.names(), ", "))
			}
			if deny {
				p.Deny = appendNew(p.Deny, word)
			} else {
				p.Allow = appendNew(p.Allow, word)
			}
		}
	}
	return p, nil
}

func appendNew[T comparable](s []T, vs ...T) []T {
	for _, v := range vs {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}
