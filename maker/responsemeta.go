package maker

import "github.com/tmc/langchaingo/llms"

// The GenerationInfo keys under which a model reports what its server
// said of a response beyond langchaingo's fields: the response's id and
// the model that answered (which may name a version the request's model
// did not). maker/models sets them on every choice of a response whose
// body carried them; observers read them with ResponseMeta.
const (
	InfoResponseID    = "ResponseID"
	InfoResponseModel = "ResponseModel"
)

// ResponseMeta returns the response id and the answering model of resp,
// as its first choice's GenerationInfo reports them (InfoResponseID,
// InfoResponseModel), and its reasoning tokens as langchaingo's OpenAI
// client reports them ("ReasoningTokens"), reasoningOK false when no
// choice says. Each is empty or zero when the model did not say. Cost: a
// few map lookups.
func ResponseMeta(resp *llms.ContentResponse) (id, model string, reasoning int, reasoningOK bool) {
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return "", "", 0, false
	}
	info := resp.Choices[0].GenerationInfo
	id, _ = info[InfoResponseID].(string)
	model, _ = info[InfoResponseModel].(string)
	reasoning, reasoningOK = info["ReasoningTokens"].(int)
	return id, model, reasoning, reasoningOK
}
