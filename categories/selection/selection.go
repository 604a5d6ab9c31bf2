// Package selection reads a --tools list (the command's flag, a spec's
// "tools", a batch line's) into the categories.Policy it names;
// Policy.String writes one back.
package selection

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mdap-go/mdap/categories"
)

// Parse reads a --tools list: comma-separated category and tool
// names alike, for example "file_read,search,grep". A category name allows
// the category, a tool name allows that tool, and a name with a leading '-'
// denies that tool or that category (a denied category stays a category:
// tools added to it later are denied too). Two words have a special
// meaning: "read_only" (the read-only categories) and "none" (nothing but
// the index tool). An empty or blank selection is [categories.DefaultPolicy].
//
// The selection replaces the default: "file_write" alone allows file_write
// and not file_read. An unknown word is an error wrapping [categories.ErrUnknownName]
// that lists every valid name; denying the index tool is an error wrapping
// [categories.ErrReservedName].
func Parse(t *categories.Taxonomy, s string) (categories.Policy, error) {
	if strings.TrimSpace(s) == "" {
		return categories.DefaultPolicy(), nil
	}
	var p categories.Policy
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
			p.Categories = appendNew(p.Categories, categories.ReadOnly()...)
		case categories.Category(word).Valid():
			if deny {
				p.DenyCategories = appendNew(p.DenyCategories, categories.Category(word))
			} else {
				p.Categories = appendNew(p.Categories, categories.Category(word))
			}
		case word == categories.IndexTool:
			if deny {
				return categories.Policy{}, fmt.Errorf("%w: %s cannot be denied: it is how a model learns what it may use", categories.ErrReservedName, categories.IndexTool)
			}
		default:
			if _, ok := t.Lookup(word); !ok {
				return categories.Policy{}, fmt.Errorf("%w: %q in --tools %q; valid names: read_only, none, %s", categories.ErrUnknownName, word, s, strings.Join(names(t), ", "))
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

// names returns the valid words of a selection: categories, then tools.
func names(t *categories.Taxonomy) []string {
	var names []string
	for _, c := range categories.All() {
		names = append(names, string(c))
	}
	for _, e := range t.Tools() {
		names = append(names, e.Name)
	}
	return names
}
