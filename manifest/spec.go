package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// configKey matches a template that is exactly one config reference, in any
// of the three quoting forms the builder writes.
var configKey = regexp.MustCompile(`^\s*\{\{\s*config(?:\[\s*['"]([^'"\]]+)['"]\s*\]|\.([A-Za-z_][A-Za-z0-9_]*))\s*\}\}\s*$`)

// ConfigKey returns the config key a template refers to, when it is exactly
// {{ config['key'] }}, {{ config["key"] }} or {{ config.key }}.
func ConfigKey(tpl string) (string, bool) {
	m := configKey.FindStringSubmatch(tpl)
	if m == nil {
		return "", false
	}
	if m[1] != "" {
		return m[1], true
	}
	return m[2], true
}

type input struct {
	field    string // the authenticator field, for warnings
	key      string
	def      map[string]any
	required bool
}

// Spec derives the SPEC payload from a resolved manifest: its spec block plus
// the end-user inputs the builder adds for its authenticator. Warnings name
// auth fields that hold a literal secret instead of a config reference.
func Spec(resolved map[string]any) (spec map[string]any, warnings []string) {
	block, _ := resolved["spec"].(map[string]any)
	cs, _ := DeepCopy(block["connection_specification"]).(map[string]any)
	if cs == nil {
		cs = map[string]any{}
	}
	if _, ok := cs["$schema"]; !ok {
		cs["$schema"] = "http://json-schema.org/draft-07/schema#"
	}
	if _, ok := cs["type"]; !ok {
		cs["type"] = "object"
	}
	if _, ok := cs["additionalProperties"]; !ok {
		cs["additionalProperties"] = true
	}
	props, _ := cs["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	required := strList(cs["required"])
	nextOrder := 0
	for _, p := range props {
		if pm, ok := p.(map[string]any); ok {
			if o, ok := pm["order"].(int64); ok && int(o) >= nextOrder {
				nextOrder = int(o) + 1
			}
		}
	}
	authPath, a := findAuthenticator(resolved)
	for _, in := range authInputs(a, authPath, &warnings) {
		if _, exists := props[in.key]; exists {
			continue
		}
		in.def["order"] = int64(nextOrder)
		nextOrder++
		props[in.key] = in.def
		if in.required && !slices.Contains(required, in.key) {
			required = append(required, in.key)
		}
	}
	cs["properties"] = props
	if len(required) > 0 {
		list := make([]any, len(required))
		for i, r := range required {
			list[i] = r
		}
		cs["required"] = list
	}
	spec = map[string]any{"connectionSpecification": cs}
	if u, ok := block["documentation_url"].(string); ok && u != "" {
		spec["documentationUrl"] = u
	}
	if aa, ok := block["advanced_auth"]; ok {
		spec["advanced_auth"] = aa
	}
	return spec, warnings
}

// findAuthenticator returns the connector's authenticator: the shared base
// requester's, else the first stream's.
func findAuthenticator(resolved map[string]any) (string, map[string]any) {
	if defs, ok := resolved["definitions"].(map[string]any); ok {
		if br, ok := defs["base_requester"].(map[string]any); ok {
			if a, ok := br["authenticator"].(map[string]any); ok {
				return "definitions.base_requester.authenticator", a
			}
		}
	}
	streams, _ := resolved["streams"].([]any)
	for i, s := range streams {
		sm, _ := s.(map[string]any)
		ret, _ := sm["retriever"].(map[string]any)
		req, _ := ret["requester"].(map[string]any)
		if a, ok := req["authenticator"].(map[string]any); ok {
			return fmt.Sprintf("streams[%d].retriever.requester.authenticator", i), a
		}
	}
	return "", nil
}

func secretInput(title string) map[string]any {
	return map[string]any{"type": "string", "title": title, "airbyte_secret": true}
}

// authInputs lists the end-user inputs of an authenticator (builder-mapping §1.1).
func authInputs(a map[string]any, path string, warnings *[]string) []input {
	if a == nil {
		return nil
	}
	var out []input
	field := func(name string, def map[string]any, required, secret bool) {
		v, ok := a[name]
		if !ok || v == nil {
			return
		}
		s, isStr := v.(string)
		if !isStr {
			return
		}
		key, ok := ConfigKey(s)
		if !ok {
			if secret && s != "" && !strings.Contains(s, "{{") {
				*warnings = append(*warnings, fmt.Sprintf("%s.%s holds a literal value instead of a config reference such as {{ config['%s'] }}: credentials belong in the config, not the manifest", path, name, name))
			}
			return
		}
		out = append(out, input{field: name, key: key, def: def, required: required})
	}
	fromPath := func(v any, def map[string]any) {
		if l := strList(v); len(l) == 1 {
			out = append(out, input{key: l[0], def: def})
		}
	}
	switch a["type"] {
	case APIKeyAuth, BearerAuth:
		field("api_token", secretInput("API Key"), true, true)
	case BasicAuth:
		field("username", map[string]any{"type": "string", "title": "Username"}, true, false)
		pw := secretInput("Password")
		pw["always_show"] = true
		field("password", pw, false, true)
	case OAuth:
		field("client_id", secretInput("Client ID"), true, true)
		field("client_secret", secretInput("Client secret"), true, true)
		updater, _ := a["refresh_token_updater"].(map[string]any)
		if a["grant_type"] != "client_credentials" {
			if _, ok := a["refresh_token"]; ok {
				field("refresh_token", secretInput("Refresh token"), true, true)
			} else if updater != nil {
				if l := strList(updater["refresh_token_config_path"]); len(l) == 1 {
					out = append(out, input{key: l[0], def: secretInput("Refresh token"), required: true})
				}
			}
		}
		if updater != nil {
			at := secretInput("Access token")
			at["description"] = "The current access token. This field might be overridden by the connector based on the token refresh endpoint response."
			fromPath(updater["access_token_config_path"], at)
			fromPath(updater["token_expiry_date_config_path"], map[string]any{"type": "string", "title": "Token expiry date", "format": "date-time",
				"description": "The date the current access token expires in. This field might be overridden by the connector based on the token refresh endpoint response."})
		}
	case SessionToken:
		if lr, ok := a["login_requester"].(map[string]any); ok {
			inner, _ := lr["authenticator"].(map[string]any)
			out = append(out, authInputs(inner, path+".login_requester.authenticator", warnings)...)
		}
	}
	return out
}

// DeepCopy copies decoded JSON or YAML values (maps and lists); scalars are shared.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = DeepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = DeepCopy(e)
		}
		return out
	}
	return v
}

// ValidateConfig checks a config against a connection specification; the
// error names the config key.
func ValidateConfig(connSpec map[string]any, config map[string]any) error {
	b, err := json.Marshal(connSpec)
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	if err := c.AddResource("spec.json", bytes.NewReader(b)); err != nil {
		return fmt.Errorf("the spec's connection_specification is not a valid JSON schema: %v", err)
	}
	s, err := c.Compile("spec.json")
	if err != nil {
		return fmt.Errorf("the spec's connection_specification is not a valid JSON schema: %s", oneLine(err.Error()))
	}
	cfg := map[string]any{}
	for k, v := range config {
		if !strings.HasPrefix(k, "__") {
			cfg[k] = v
		}
	}
	err = s.Validate(cfg)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msg := e.Message
			if strings.HasPrefix(msg, "missing properties: ") {
				for _, p := range strings.Split(strings.TrimPrefix(msg, "missing properties: "), ", ") {
					lines = append(lines, fmt.Sprintf("config key %s is required", strings.Trim(instancePath("", e.InstanceLocation)+"."+strings.Trim(p, "'"), ".")))
				}
				return
			}
			loc := instancePath("", e.InstanceLocation)
			if loc == "" {
				lines = append(lines, msg)
			} else {
				lines = append(lines, fmt.Sprintf("config key %s: %s", loc, msg))
			}
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(lines)
	return errors.New(strings.Join(lines, "; "))
}
