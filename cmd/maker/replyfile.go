package main

import "github.com/mdap-go/mdap/maker"

// readReply reads a model reply saved in a file: maker.ReadReply.
func readReply(name string, b []byte) (maker.Reply, error) { return maker.ReadReply(name, b) }
