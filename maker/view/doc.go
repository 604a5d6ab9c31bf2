// Package view shows one run: a read-only web page, updated live by
// server-sent events, with the run's counters (steps decided and left,
// ETA, samples per step, red-flag rate, contested and escalated steps,
// usage and cost, each model's share) and its step map, every step one
// cell of an image coloured by what the step took; a click on a cell
// shows that step's journal record. It also writes the map as a PNG and
// the run as a self-contained HTML report.
//
// A view is fed from a journal file it follows as the run appends to it
// (Follow; it never locks or writes the file) or in process from a
// Solver's Progress and OnSample callbacks (Attach). Either way it
// aggregates steps as they come and keeps one byte per step for the map
// (Cell), a sparse index of the file (one offset every 256 steps) to find
// a step's record again, and in process the last RecentRecords records:
// never the step list whole, so a million-step run costs about a
// megabyte.
//
// The server (Serve) listens on loopback unless told otherwise and then
// requires a bearer token; it answers GET and HEAD only, within
// httpbound's limits, and caps its event streams (MaxStreams).
package view
