package corpus

import (
	"github.com/airbyte-go/source-declarative/genapi"
	"sort"
	"strings"
)

// Features are the components a manifest uses, for the README table.
type Features struct {
	Streams         int
	Auth            []string
	Paginators      []string
	Incremental     []string
	Partitions      []string
	Transformations []string
}

// authNames shorten authenticator types for the table.
var authNames = map[string]string{
	"BearerAuthenticator":       "Bearer",
	"ApiKeyAuthenticator":       "ApiKey",
	"BasicHttpAuthenticator":    "Basic",
	"OAuthAuthenticator":        "OAuth",
	"SessionTokenAuthenticator": "SessionToken",
	"SelectiveAuthenticator":    "Selective",
	"NoAuth":                    "NoAuth",
}

// FeaturesOf lists what the streams of a resolved manifest use (the
// definitions they do not reference are not counted).
func FeaturesOf(resolved map[string]any) Features {
	f := Features{Streams: len(list(resolved["streams"]))}
	auth, pag, inc, part, tr := set{}, set{}, set{}, set{}, set{}
	for _, s := range genapi.AllStreams(resolved) {
		retriever := asMap(s["retriever"])
		requester := asMap(retriever["requester"])
		auth.add(authName(asMap(requester["authenticator"])))
		paginator := asMap(retriever["paginator"])
		switch {
		case paginator == nil || paginator["type"] == "NoPagination":
			pag.add("none")
		default:
			pag.add(typeName(asMap(paginator["pagination_strategy"])))
		}
		if i := asMap(s["incremental_sync"]); i != nil {
			inc.add(typeName(i))
		}
		for _, r := range asList(retriever["partition_router"]) {
			part.add(typeName(asMap(r)))
		}
		for _, t := range list(s["transformations"]) {
			tr.add(typeName(asMap(t)))
		}
	}
	f.Auth, f.Paginators, f.Incremental, f.Partitions, f.Transformations = auth.sorted(), pag.sorted(), inc.sorted(), part.sorted(), tr.sorted()
	return f
}

// authName is an authenticator's short name; a selective one lists its
// choices.
func authName(a map[string]any) string {
	if a == nil {
		return "none"
	}
	t := typeName(a)
	if t == "SelectiveAuthenticator" {
		choices := set{}
		for _, c := range asMap(a["authenticators"]) {
			choices.add(authName(asMap(c)))
		}
		return "Selective(" + strings.Join(choices.sorted(), "/") + ")"
	}
	if short, ok := authNames[t]; ok {
		return short
	}
	return t
}

func typeName(m map[string]any) string {
	if t, ok := m["type"].(string); ok {
		return t
	}
	return "untyped"
}

// asList is a value that may be one component or a list of them, as a list.
func asList(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	}
	return []any{v}
}

type set map[string]bool

func (s set) add(v string) { s[v] = true }

func (s set) sorted() []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
