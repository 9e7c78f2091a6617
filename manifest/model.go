package manifest

import "github.com/airbyte-go/source-declarative/runtime/interp"

// Source is a decoded DeclarativeSource.
type Source struct {
	Version          string
	Streams          []*Stream
	CheckStreams     []string
	Spec             map[string]any // the manifest's spec block, nil when absent
	ConcurrencyLevel int
	Resolved         map[string]any // the manifest after $ref and $parameters resolution
}

// Stream is a DeclarativeStream.
type Stream struct {
	Name       string
	Path       string // manifest path, e.g. streams[0]
	PrimaryKey [][]string
	Schema     map[string]any // nil: a permissive object schema
	Retriever  *Retriever
}

// Retriever is a SimpleRetriever.
type Retriever struct {
	Requester *Requester
	Selector  *Selector
	Paginator *Paginator // nil: one request
}

// Requester is an HttpRequester.
type Requester struct {
	Path         string
	URLBase      *interp.Template
	URLPath      *interp.Template
	URL          *interp.Template
	Method       string
	Params       *Mapping
	Headers      *Mapping
	BodyJSON     any   // nested maps and lists whose string leaves are *interp.Template, or one *interp.Template
	BodyData     any   // *Mapping or *interp.Template
	Auth         *Auth // nil: no authentication
	ErrorHandler *ErrorHandler
	AllowedHosts []string
	Parameters   map[string]any
}

// Mapping is a string-keyed map of templates, in key order.
type Mapping struct {
	Keys   []string
	Values map[string]*interp.Template
	Whole  *interp.Template // the mapping given as one template string
}

// Selector is a RecordSelector with a DpathExtractor.
type Selector struct {
	FieldPath []*interp.Template
	Filter    *interp.Template
}

// Pagination strategies.
const (
	OffsetIncrement  = "OffsetIncrement"
	PageIncrement    = "PageIncrement"
	CursorPagination = "CursorPagination"
)

// Paginator is a DefaultPaginator with its strategy.
type Paginator struct {
	Path            string
	Strategy        string
	PageSize        *interp.Template // nil when unset
	PageSizePath    string
	PageSizeOption  *RequestOption
	PageTokenOption *RequestOption // InjectInto "path" for RequestPath
	StartFromPage   int64
	InjectOnFirst   bool
	CursorValue     *interp.Template
	StopCondition   *interp.Template
}

// Injection places of a RequestOption.
const (
	InjectParam    = "request_parameter"
	InjectHeader   = "header"
	InjectBodyData = "body_data"
	InjectBodyJSON = "body_json"
	InjectPath     = "path"
)

// RequestOption says where a value goes in a request.
type RequestOption struct {
	Path       string
	InjectInto string
	FieldName  *interp.Template
	FieldPath  []*interp.Template
}

// Authenticator types.
const (
	NoAuth       = "NoAuth"
	BasicAuth    = "BasicHttpAuthenticator"
	BearerAuth   = "BearerAuthenticator"
	APIKeyAuth   = "ApiKeyAuthenticator"
	OAuth        = "OAuthAuthenticator"
	SessionToken = "SessionTokenAuthenticator"
)

// Auth is one authenticator.
type Auth struct {
	Type       string
	Path       string
	Raw        map[string]any // the resolved component, to tell shared authenticators apart
	Parameters map[string]any
	Username   *interp.Template
	Password   *interp.Template
	Token      *interp.Template // Bearer and ApiKey token
	Inject     *RequestOption   // ApiKey placement
	OAuth      *OAuthConfig
	Session    *SessionConfig
}

// OAuthConfig is an OAuthAuthenticator.
type OAuthConfig struct {
	Endpoint         *interp.Template
	ClientID         *interp.Template
	ClientSecret     *interp.Template
	RefreshToken     *interp.Template
	ClientIDName     string
	ClientSecretName string
	RefreshTokenName string
	GrantTypeName    string
	GrantType        string
	Scopes           []string
	AccessTokenName  string
	AccessTokenValue *interp.Template
	ExpiresInName    string
	TokenExpiryDate  *interp.Template
	ExpiryDateFormat string
	ExtraBody        *Mapping
	Headers          *Mapping
	FormEncoded      bool
	Updater          *TokenUpdater
}

// TokenUpdater is a RefreshTokenUpdater: where rotating tokens live in the config.
type TokenUpdater struct {
	RefreshTokenName string
	AccessTokenPath  []string
	RefreshTokenPath []string
	ExpiryDatePath   []string
}

// SessionConfig is a SessionTokenAuthenticator.
type SessionConfig struct {
	Login      *Requester
	TokenPath  []string
	Expiration *interp.Duration // nil: log in before every request
	Bearer     bool             // data requests carry Authorization: Bearer
	Inject     *RequestOption   // otherwise the token goes here
	APIToken   *interp.Template // value injected, over session_token
}

// ErrorHandler is a DefaultErrorHandler, or several for a CompositeErrorHandler.
type ErrorHandler struct {
	MaxRetries *int
	Backoff    []Backoff
	Filters    []ResponseFilter
	Handlers   []*ErrorHandler // CompositeErrorHandler
}

// Backoff is one backoff strategy.
type Backoff struct {
	Type    string // ExponentialBackoffStrategy, ConstantBackoffStrategy, WaitTimeFromHeader, WaitUntilTimeFromHeader
	Seconds float64
	Factor  float64
	Header  string
	Regex   string
	MaxWait float64
	MinWait float64
}

// ResponseFilter is an HttpResponseFilter.
type ResponseFilter struct {
	Action          string
	HTTPCodes       []int
	MessageContains string
	Predicate       *interp.Template
	ErrorMessage    *interp.Template
	FailureType     string
}

// Stream returns the stream named name, or nil.
func (s *Source) Stream(name string) *Stream {
	for _, st := range s.Streams {
		if st.Name == name {
			return st
		}
	}
	return nil
}
