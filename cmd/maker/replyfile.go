package main

import (
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/replyfile"
)

// readReply reads a model reply saved in a file: replyfile.Read.
func readReply(name string, b []byte) (maker.Reply, error) { return replyfile.Read(name, b) }
