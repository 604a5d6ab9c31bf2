package simserver

import "github.com/mdap-go/mdap/internal/httpbound"

// Bounds are the HTTP server's limits (Config.Bounds): read, write and
// idle timeouts, the most header bytes of a request (431 past it, before
// any handler runs), the most connections open at once (past it a
// connection is answered 503 and closed) and the most requests handled at
// once (past it, 503 with Retry-After: 1). A zero field takes its default
// from DefaultBounds; a negative one means no bound.
type Bounds = httpbound.Limits

// DefaultBounds are serve-sim's limits: headers in 10 s and at most
// 16 KiB of them, a whole request in 60 s, a response in 10 minutes, idle
// connections kept 2 minutes, at most 1024 connections and 256 requests at
// once.
var DefaultBounds = httpbound.Defaults
