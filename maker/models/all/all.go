// Package all registers every model provider of mdap with maker/models
// (openai:, ollama:, anthropic:): what a command, a server or a batch that
// opens any spec imports for its effect.
//
//	import _ "github.com/mdap-go/mdap/maker/models/all"
package all

import (
	_ "github.com/mdap-go/mdap/maker/models/anthropic" // anthropic:
	_ "github.com/mdap-go/mdap/maker/models/ollama"    // ollama:
	_ "github.com/mdap-go/mdap/maker/models/openai"    // openai:
)
