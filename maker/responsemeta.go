package maker

// The GenerationInfo keys under which a model reports what its server
// said of a response beyond langchaingo's fields: the response's id and
// the model that answered (which may name a version the request's model
// did not). maker/models sets them on every choice of a response whose
// body carried them; observers read them (maker/observe does).
const (
	InfoResponseID    = "ResponseID"
	InfoResponseModel = "ResponseModel"
)
