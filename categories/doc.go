// Package categories is the tool taxonomy: each tool sits in exactly one
// [Category]; three categories are read-only; a [Policy] says which
// categories and tools may run (it allows exactly what it lists;
// [DefaultPolicy] is the read-only one; package categories/selection
// reads one from a --tools list); a [Taxonomy] takes the [Inventory] of
// what is loaded, withheld or unavailable.
//
// It knows tools by name only. Running them, and checking a call against a
// policy at the moment it runs, is package executor's job.
package categories
