package simserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdap-go/mdap/intent"
	"github.com/mdap-go/mdap/maker"
	"github.com/mdap-go/mdap/maker/sim"
	"github.com/tmc/langchaingo/llms"
)

// ShutdownGrace is how long [Server.Serve] waits, once its context ends,
// for requests in flight to be answered before it closes their
// connections.
const ShutdownGrace = 5 * time.Second

// Server is the OpenAI-compatible HTTP face of a simulated model: an
// [http.Handler] for GET /v1/models, GET /v1/models/{name} and POST
// /v1/chat/completions (the same paths without /v1 too). Build one with
// [New]; serve it with [Server.Serve], or mount it in any http.Server or
// httptest.Server. Safe for concurrent use.
//
// The hang and truncate faults end their response by panicking with
// [http.ErrAbortHandler], which net/http's server turns into a closed
// connection; call ServeHTTP through a real server, not a bare
// ResponseRecorder, when those faults are on.
type Server struct {
	cfg         Config
	model       *sim.Model
	name        string
	maxBody     int64
	log         *slog.Logger
	fingerprint string

	mu       sync.Mutex
	arrivals map[uint64]uint64 // per prompt step: the next sample index

	closing   chan struct{}
	closeOnce sync.Once

	// nonce and seq make response and tool-call ids unique across
	// requests and servers (the replies stay reproducible; the ids are
	// not part of them).
	nonce uint64
	seq   atomic.Uint64

	n     counters
	cache *prefixCache // nil: caching off (billing.go)
}

// counters are the Stats, as atomics.
type counters struct {
	requests, replies, badRequests, providerErrors, unanswered atomic.Uint64
	rateLimited, serverErrors, hangs, truncated, garbage       atomic.Uint64
}

// Stats counts what a Server answered to chat completion requests.
type Stats struct {
	// Requests is every chat completion request received.
	Requests uint64 `json:"requests"`
	// Replies were answered 200 with a whole completion.
	Replies uint64 `json:"replies"`
	// BadRequests were refused: 400 (the message names the field), 413
	// (body too large), or a prompt the oracle does not read.
	BadRequests uint64 `json:"bad_requests"`
	// ProviderErrors are the simulated model's own errors
	// (Config.Sim.ErrorRate), answered 500.
	ProviderErrors uint64 `json:"provider_errors"`
	// Unanswered ended with the client gone or the server closing before
	// the reply was ready.
	Unanswered uint64 `json:"unanswered"`
	// The faults served, by kind.
	RateLimited  uint64 `json:"rate_limited"`
	ServerErrors uint64 `json:"server_errors"`
	Hangs        uint64 `json:"hangs"`
	Truncated    uint64 `json:"truncated"`
	Garbage      uint64 `json:"garbage"`
}

// Faults is the number of faults served, all kinds together.
func (s Stats) Faults() uint64 {
	return s.RateLimited + s.ServerErrors + s.Hangs + s.Truncated + s.Garbage
}

// New returns a server for cfg. Errors wrap [ErrConfig]: what
// [Config.Validate] refuses, or an Oracle that sim.New refuses with
// cfg.Sim. Cost: O(1); it starts nothing.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := sim.New(cfg.Oracle, cfg.Sim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	s := &Server{
		cfg: cfg, model: m, name: cfg.ModelName, maxBody: cfg.MaxBodyBytes, log: cfg.Logger,
		arrivals: map[uint64]uint64{}, closing: make(chan struct{}),
	}
	s.cache = newPrefixCache(cfg.Billing)
	if s.name == "" {
		s.name = DefaultModelName
	}
	if s.maxBody == 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.fingerprint = fmt.Sprintf("fp_sim_%016x", fnvString(m.Identity()))
	s.nonce = rand.Uint64()
	return s, nil
}

// ModelName is the model the server lists.
func (s *Server) ModelName() string { return s.name }

// Identity is the simulated model's identity (sim.Model.Identity): its
// seed, p and error rates, as a journal records them.
func (s *Server) Identity() string { return s.model.Identity() }

// Stats returns the counts so far. Safe for concurrent use; the fields are
// read one by one, so a snapshot taken while requests run may be off by
// the requests in between.
func (s *Server) Stats() Stats {
	return Stats{
		Requests: s.n.requests.Load(), Replies: s.n.replies.Load(), BadRequests: s.n.badRequests.Load(),
		ProviderErrors: s.n.providerErrors.Load(), Unanswered: s.n.unanswered.Load(),
		RateLimited: s.n.rateLimited.Load(), ServerErrors: s.n.serverErrors.Load(), Hangs: s.n.hangs.Load(),
		Truncated: s.n.truncated.Load(), Garbage: s.n.garbage.Load(),
	}
}

// Close releases every hanging request (its connection is closed without a
// response) and makes later hang faults end at once. It does not stop a
// server that serves s; see [Server.Serve]. Call it before closing an
// httptest.Server that serves s, whose Close waits for hanging requests.
// Idempotent; safe for concurrent use.
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.closing) }) }

// Serve answers HTTP requests on ln, within Config.Bounds (timeouts, a
// cap on connections and on requests in flight, 503 past them), until ctx
// ends, then shuts down
// gracefully: it stops accepting, releases hanging requests (Close), waits
// up to ShutdownGrace for the requests in flight, closes what remains and
// returns nil. It closes ln. When it returns, the goroutine it started to
// serve has ended and, unless the grace period ran out, so has every
// request handler; a handler cut at the deadline has its request's
// context cancelled and returns soon after. Errors: the listener's
// failure, wrapped, if serving stops before ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	b := s.cfg.Bounds.WithDefaults(DefaultBounds)
	hs := b.Server(s)
	hs.ErrorLog = slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)
	ln = b.Listener(ln)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return fmt.Errorf("simserver: serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		s.log.Warn("requests still in flight at shutdown were cut", "grace", ShutdownGrace, "err", err)
		_ = hs.Close()
	}
	<-errc // http.ErrServerClosed
	return nil
}

// ServeHTTP routes a request; see [Server].
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Request-Id", fmt.Sprintf("req_%016x", mix(s.nonce, domainRequest, s.seq.Add(1))))
	path := strings.TrimSuffix(r.URL.Path, "/")
	if rest, ok := strings.CutPrefix(path, "/v1"); ok && (rest == "" || rest[0] == '/') {
		path = rest
	}
	switch {
	case path == "/chat/completions":
		if r.Method != http.MethodPost {
			s.methodNotAllowed(w, r, http.MethodPost)
			return
		}
		s.chat(w, r)
	case path == "/models":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.methodNotAllowed(w, r, http.MethodGet)
			return
		}
		writeJSON(w, http.StatusOK, modelList{Object: "list", Data: []modelInfo{s.modelInfo()}})
	case strings.HasPrefix(path, "/models/"):
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.methodNotAllowed(w, r, http.MethodGet)
			return
		}
		if name := strings.TrimPrefix(path, "/models/"); name != s.name {
			writeError(w, http.StatusNotFound, "invalid_request_error", "model", "model_not_found",
				fmt.Sprintf("The model %q does not exist; this server lists %q", name, s.name))
			return
		}
		writeJSON(w, http.StatusOK, s.modelInfo())
	default:
		writeError(w, http.StatusNotFound, "invalid_request_error", "", "not_found",
			fmt.Sprintf("no route for %s %s; this server answers GET /v1/models and POST /v1/chat/completions", r.Method, r.URL.Path))
	}
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "method_not_allowed",
		fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, allow))
}

type modelList struct {
	Object string      `json:"object"`
	Data   []modelInfo `json:"data"`
}

type modelInfo struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (s *Server) modelInfo() modelInfo {
	return modelInfo{ID: s.name, Object: "model", OwnedBy: "mdap-simulated"}
}

// requestID is a request's identity: the step (a hash of its prompt text)
// and the sample index of its first choice.
type requestID struct {
	step   int
	index  int
	seeded bool
}

// promptStep is the step identity of a prompt: its 64-bit FNV-1a hash,
// shifted to a non-negative int.
func promptStep(prompt string) int { return int(fnvString(prompt) >> 1) }

func fnvString(s string) uint64 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, s)
	return h.Sum64()
}

// identify gives the request its identity: the sample index is the
// request's seed if it has one, else the prompt's arrival count (which
// then moves on by n).
func (s *Server) identify(prompt string, req *chatRequest) requestID {
	step := promptStep(prompt)
	if req.Seed != nil {
		return requestID{step: step, index: int(*req.Seed), seeded: true}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.arrivals[uint64(step)]
	s.arrivals[uint64(step)] = i + uint64(req.n)
	return requestID{step: step, index: int(i)}
}

// chat answers POST /v1/chat/completions.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.n.requests.Add(1)
	start := time.Now()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		s.n.badRequests.Add(1)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "", "request_too_large",
				fmt.Sprintf("the request body exceeds this server's limit of %d bytes", s.maxBody))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "bad_body", "reading the request body: "+err.Error())
		return
	}
	req, err := parseRequest(body)
	if err != nil {
		s.n.badRequests.Add(1)
		var re *requestErr
		param := ""
		if errors.As(err, &re) {
			param = re.param
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", param, "invalid_request", err.Error())
		return
	}
	msgs := req.messages()
	prompt := sim.PromptText(msgs)
	id := s.identify(prompt, req)
	fault := s.drawFault(id)
	defer func() {
		s.log.Debug("chat completion", "step", fmt.Sprintf("%016x", id.step), "index", id.index, "seeded", id.seeded,
			"n", req.n, "fault", fault.String(), "took", time.Since(start))
	}()

	switch fault {
	case faultRateLimit:
		s.n.rateLimited.Add(1)
		w.Header().Set("Retry-After", strconv.Itoa(s.cfg.Faults.RetryAfter))
		writeError(w, http.StatusTooManyRequests, "rate_limit_error", "", "rate_limit_exceeded",
			fmt.Sprintf("Rate limit exceeded (simulated); retry after %d seconds", s.cfg.Faults.RetryAfter))
		return
	case faultServerError:
		s.n.serverErrors.Add(1)
		writeError(w, http.StatusInternalServerError, "server_error", "", "internal_error",
			"The server had an error while processing your request (simulated)")
		return
	case faultHang:
		s.n.hangs.Add(1)
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		panic(http.ErrAbortHandler)
	case faultGarbage:
		s.n.garbage.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, garbage(s.cfg.Sim.Seed, id))
		return
	}

	status, reply, err := s.complete(r.Context(), req, msgs, id)
	if err != nil { // the client is gone: nobody to answer
		s.n.unanswered.Add(1)
		panic(http.ErrAbortHandler)
	}
	if fault == faultTruncate {
		s.n.truncated.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
		w.WriteHeader(status)
		_, _ = w.Write(reply[:len(reply)/2])
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
	if status == http.StatusOK {
		s.n.replies.Add(1)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(reply)
}

// complete asks the simulated model for the request's choices, sample
// indexes id.index, id.index+1, ..., concurrently, and returns the status
// and body of the answer: a completion, or the OpenAI error of the first
// failed choice. The error is ctx's, when it ended first.
func (s *Server) complete(ctx context.Context, req *chatRequest, msgs []llms.MessageContent, id requestID) (int, []byte, error) {
	resps := make([]*llms.ContentResponse, req.n)
	errs := make([]error, req.n)
	var wg sync.WaitGroup
	for j := range req.n {
		wg.Go(func() {
			sctx := maker.WithSampleID(ctx, maker.SampleID{Step: id.step, Index: id.index + j})
			resps[j], errs[j] = s.model.GenerateContent(sctx, msgs, llms.WithMaxTokens(req.maxTokens))
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, sim.ErrUnknownPrompt):
			s.n.badRequests.Add(1)
			return errorBody(http.StatusBadRequest, "invalid_request_error", "messages", "unknown_prompt",
				"the simulated model does not understand this prompt (it is not a step prompt of the task this server was started for): "+err.Error())
		case errors.Is(err, sim.ErrProvider):
			s.n.providerErrors.Add(1)
			return errorBody(http.StatusInternalServerError, "server_error", "", "simulated_provider_error",
				"The server had an error while processing your request (simulated provider error)")
		default:
			return errorBody(http.StatusInternalServerError, "server_error", "", "internal_error", err.Error())
		}
	}

	model := req.Model
	if model == "" {
		model = s.name
	}
	out := completion{
		ID:                fmt.Sprintf("chatcmpl-sim-%016x", mix(s.nonce, domainID, s.seq.Add(1), uint64(id.index))),
		Object:            "chat.completion",
		Created:           time.Now().Unix(),
		Model:             model,
		SystemFingerprint: s.fingerprint,
		Choices:           make([]choice, req.n),
	}
	for j, resp := range resps {
		c := resp.Choices[0]
		if j == 0 {
			out.Usage.PromptTokens, _ = c.GenerationInfo["PromptTokens"].(int)
		}
		ct, _ := c.GenerationInfo["CompletionTokens"].(int)
		if r := s.cfg.Billing.ReasoningTokens; r > 0 {
			if req.maxTokens > 0 {
				r = max(0, min(r, req.maxTokens-ct))
			}
			ct += r
			out.Usage.CompletionDetails.ReasoningTokens += r
		}
		out.Usage.CompletionTokens += ct
		ch := choice{Index: j, FinishReason: c.StopReason, Message: message{Role: "assistant"}}
		if call, ok := toolCall(req, c, mix(s.nonce, domainToolCall, s.seq.Add(1), uint64(id.index+j))); ok {
			ch.Message.ToolCalls = []chatToolCall{call}
			ch.FinishReason = "tool_calls"
		} else {
			text := c.Content
			ch.Message.Content = &text
		}
		out.Choices[j] = ch
	}
	out.Usage.TotalTokens = out.Usage.PromptTokens + out.Usage.CompletionTokens
	out.Usage.PromptDetails.CachedTokens = s.cache.lookup(sim.PromptText(msgs), out.Usage.PromptTokens)
	b, err := json.Marshal(out)
	if err != nil { // unreachable: plain structs
		return errorBody(http.StatusInternalServerError, "server_error", "", "internal_error", err.Error())
	}
	return http.StatusOK, b, nil
}

// toolCall returns a reply as a native tool call when the request declared
// tools (and tool_choice is not "none") and the reply is a valid one
// (correct or wrong, not a red flag) that is nothing but a tool intent for
// a declared function: {"tool_intent": {"tool": NAME, "args": {...}}} or a
// bare intent becomes a call of NAME with the arguments as a JSON object.
// The intent's rationale is dropped: a native call has no place for it,
// and it never takes part in a vote.
func toolCall(req *chatRequest, c *llms.ContentChoice, idSeed uint64) (chatToolCall, bool) {
	if len(req.declared) == 0 || req.noTools {
		return chatToolCall{}, false
	}
	switch c.GenerationInfo[sim.InfoOutcome] {
	case string(sim.OutcomeCorrect), string(sim.OutcomeWrong):
	default:
		return chatToolCall{}, false
	}
	out, err := intent.Parse(c.Content)
	if err != nil || out.Intent == nil || out.Value != nil || !req.declared[out.Intent.Tool] {
		return chatToolCall{}, false
	}
	args, err := json.Marshal(out.Intent.Args)
	if err != nil { // unreachable: Parse gives JSON types
		return chatToolCall{}, false
	}
	return chatToolCall{
		ID:       fmt.Sprintf("call_%016x", idSeed),
		Type:     "function",
		Function: chatFunctionCall{Name: out.Intent.Tool, Arguments: string(args)},
	}, true
}

// completion is an OpenAI chat completion object.
type completion struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	Choices           []choice `json:"choices"`
	Usage             usage    `json:"usage"`
	SystemFingerprint string   `json:"system_fingerprint"`
}

type choice struct {
	Index        int       `json:"index"`
	Message      message   `json:"message"`
	FinishReason string    `json:"finish_reason"`
	Logprobs     *struct{} `json:"logprobs"`
}

type message struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
	Refusal   *string        `json:"refusal"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	PromptDetails    struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// apiError is OpenAI's error shape.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func errorBody(status int, typ, param, code, msg string) (int, []byte, error) {
	e := apiError{Error: apiErrorBody{Message: msg, Type: typ}}
	if param != "" {
		e.Error.Param = &param
	}
	if code != "" {
		e.Error.Code = &code
	}
	b, _ := json.Marshal(e) // plain strings always marshal
	return status, b, nil
}

func writeError(w http.ResponseWriter, status int, typ, param, code, msg string) {
	_, b, _ := errorBody(status, typ, param, code, msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v) // plain structs always marshal
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
