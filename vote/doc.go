// Package vote decides.
package vote
