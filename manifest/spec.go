package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

// ConfigPath returns the config keys a template refers to, when it is
// exactly {{ config['a'] }}, {{ config["a"]["b"] }}, {{ config.a.b }}...
// (A scanner rather than a regular expression, which cost a run ~0.2 ms to
// compile.)
func ConfigPath(tpl string) ([]string, bool) {
	s, ok := strings.CutPrefix(trimSpaceLeft(tpl), "{{")
	if !ok {
		return nil, false
	}
	if s, ok = strings.CutPrefix(trimSpaceLeft(s), "config"); !ok {
		return nil, false
	}
	var out []string
	for len(s) > 0 && (s[0] == '[' || s[0] == '.') {
		var key string
		if key, s, ok = configStep(s); !ok {
			return nil, false
		}
		out = append(out, key)
	}
	if s, ok = strings.CutPrefix(trimSpaceLeft(s), "}}"); !ok || len(out) == 0 || trimSpaceLeft(s) != "" {
		return nil, false
	}
	return out, true
}

// configStep reads one step of a config reference, ['key'], ["key"] or
// .key, and returns the key and what follows.
func configStep(s string) (key, rest string, ok bool) {
	if s[0] == '.' {
		n := 1
		for n < len(s) && (s[n] == '_' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || n > 1 && s[n] >= '0' && s[n] <= '9') {
			n++
		}
		return s[1:n], s[n:], n > 1
	}
	s = trimSpaceLeft(s[1:])
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return "", "", false
	}
	n := strings.IndexAny(s[1:], `'"]`) + 1
	if n <= 1 || s[n] == ']' {
		return "", "", false
	}
	key, s = s[1:n], trimSpaceLeft(s[n+1:])
	if s == "" || s[0] != ']' {
		return "", "", false
	}
	return key, s[1:], true
}

// trimSpaceLeft drops the white space a regular expression's \s matches.
func trimSpaceLeft(s string) string { return strings.TrimLeft(s, " \t\n\f\r") }

// ConfigKey returns the config key a template refers to, when it is exactly
// {{ config['key'] }}, {{ config["key"] }} or {{ config.key }}.
func ConfigKey(tpl string) (string, bool) {
	p, ok := ConfigPath(tpl)
	if !ok || len(p) != 1 {
		return "", false
	}
	return p[0], true
}

type input struct {
	field    string   // the authenticator field, for warnings
	path     []string // the config keys the field reads
	def      map[string]any
	required bool
}

// Spec derives the SPEC payload from a resolved manifest: its spec block as
// written, or, without a connection_specification, the end-user inputs the
// builder adds for its authenticator. Warnings name auth fields that hold a
// literal secret instead of a config reference.
func Spec(resolved map[string]any) (spec map[string]any, warnings []string) {
	block, _ := resolved["spec"].(map[string]any)
	cs, _ := DeepCopy(block["connection_specification"]).(map[string]any)
	written := cs != nil
	if cs == nil {
		cs = map[string]any{}
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
	inputs := connectorAuthInputs(resolved, &warnings)
	added := false
	if written {
		// A spec written whole is the connector's own: printed as written,
		// as Airbyte's runtime prints it, even when its authenticator reads
		// a key it lacks (delighted's password from config['nothing']): the
		// builder writes its inputs into the spec it exports.
		inputs = nil
	}
	for _, in := range inputs {
		if len(in.path) != 1 {
			continue // only top-level keys become inputs, as in the builder
		}
		key := in.path[0]
		if _, exists := props[key]; exists {
			continue
		}
		in.def["order"] = int64(nextOrder)
		nextOrder++
		props[key] = in.def
		added = true
		if in.required && !slices.Contains(required, key) {
			required = append(required, key)
		}
	}
	if added || !written {
		// The builder's wrapper around the inputs it writes; a spec
		// written whole is printed as written, as the reference does.
		cs["properties"] = props
		if len(required) > 0 {
			list := make([]any, len(required))
			for i, r := range required {
				list[i] = r
			}
			cs["required"] = list
		}
		for k, v := range map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": true} {
			if _, ok := cs[k]; !ok {
				cs[k] = v
			}
		}
	}
	// supportsNormalization and supportsDBT are the protocol's defaults, which
	// Airbyte's runtime writes out.
	spec = map[string]any{"connectionSpecification": cs, "supportsNormalization": false, "supportsDBT": false}
	if u, ok := block["documentation_url"].(string); ok && u != "" {
		spec["documentationUrl"] = u
	}
	if aa, ok := block["advanced_auth"]; ok {
		spec["advanced_auth"] = withAdvancedAuthDefaults(aa)
	}
	return spec, warnings
}

// connectorAuthInputs are the end-user inputs of the connector's
// authenticator (findAuthenticator).
func connectorAuthInputs(resolved map[string]any, warnings *[]string) []input {
	authPath, a := findAuthenticator(resolved)
	if a["type"] == Selective {
		return selectiveInputs(a, authPath, warnings)
	}
	return authInputs(a, authPath, warnings)
}

// AuthSecrets is a schema marking airbyte_secret the top-level config keys
// the connector's authenticator reads as credentials (its API key,
// password, client id and secret, refresh token...) that the spec does not
// write: what the masker hides beside the spec's own secrets, as the
// builder would have marked them.
func AuthSecrets(resolved map[string]any) map[string]any {
	block, _ := resolved["spec"].(map[string]any)
	cs, _ := block["connection_specification"].(map[string]any)
	written, _ := cs["properties"].(map[string]any)
	props := map[string]any{}
	for _, in := range connectorAuthInputs(resolved, new([]string)) {
		if len(in.path) != 1 || written[in.path[0]] != nil {
			continue // a key the spec writes is as secret as it says
		}
		if secret, _ := in.def["airbyte_secret"].(bool); secret {
			props[in.path[0]] = map[string]any{"airbyte_secret": true}
		}
	}
	return map[string]any{"type": "object", "properties": props}
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
		if path, a := streamAuthenticator(s, index("streams", i)); a != nil {
			return path, a
		}
	}
	return "", nil
}

// streamAuthenticator is the authenticator of a stream definition: of a
// StateDelegatingStream, its full refresh stream's; of a ConditionalStreams,
// its first stream's that has one.
func streamAuthenticator(s any, path string) (string, map[string]any) {
	sm, _ := s.(map[string]any)
	switch sm["type"] {
	case "StateDelegatingStream": // its full refresh stream stands for it
		return streamAuthenticator(sm["full_refresh_stream"], path+".full_refresh_stream")
	case "ConditionalStreams":
		inner, _ := sm["streams"].([]any)
		for i, st := range inner {
			if p, a := streamAuthenticator(st, fmt.Sprintf("%s.streams[%d]", path, i)); a != nil {
				return p, a
			}
		}
		return "", nil
	}
	ret, _ := sm["retriever"].(map[string]any)
	req, _ := ret["requester"].(map[string]any)
	if a, ok := req["authenticator"].(map[string]any); ok {
		return path + ".retriever.requester.authenticator", a
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
		keys, ok := ConfigPath(s)
		if !ok {
			if secret && s != "" && !strings.Contains(s, "{{") {
				*warnings = append(*warnings, fmt.Sprintf("%s.%s holds a literal value instead of a config reference such as {{ config['%s'] }}: credentials belong in the config, not the manifest", path, name, name))
			}
			return
		}
		out = append(out, input{field: name, path: keys, def: def, required: required})
	}
	fromPath := func(v any, def map[string]any) {
		if l := strList(v); len(l) > 0 {
			out = append(out, input{path: l, def: def})
		}
	}
	switch a["type"] {
	case APIKeyAuth, BearerAuth:
		field("api_token", secretInput("API Key"), true, true)
	case JWTAuth:
		field("secret_key", secretInput("Secret Key"), true, true)
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
				if l := strList(updater["refresh_token_config_path"]); len(l) > 0 {
					out = append(out, input{path: l, def: secretInput("Refresh token"), required: true})
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

// narrowChoices handles the oneOf objects of a spec whose options each pin a
// key to a constant (the usual {auth_type: const} choice): a config missing
// that key, or naming no option, is said so plainly, with the names
// allowed; a config naming one option has the oneOf replaced by that
// option, so that only its own fields are reported.
func narrowChoices(schema map[string]any, value any, path string) []string {
	var errs []string
	obj, _ := value.(map[string]any)
	if props, ok := schema["properties"].(map[string]any); ok && obj != nil {
		for _, k := range interp.SortedKeys(props) {
			if sub, ok := props[k].(map[string]any); ok {
				if v, present := obj[k]; present {
					errs = append(errs, narrowChoices(sub, v, strings.TrimPrefix(path+"."+k, "."))...)
				}
			}
		}
	}
	options, _ := schema["oneOf"].([]any)
	key, consts := discriminator(options)
	if key == "" || obj == nil {
		return errs
	}
	where := strings.TrimPrefix(path+"."+key, ".")
	allowed := make([]string, len(consts))
	for i, c := range consts {
		allowed[i] = interp.String(c)
	}
	v, present := obj[key]
	if !present {
		return append(errs, fmt.Sprintf("config key %s is required (one of: %s)", where, strings.Join(allowed, ", ")))
	}
	for i, c := range consts {
		if jsonText(c) == jsonText(v) {
			delete(schema, "oneOf")
			schema["allOf"] = append(anyList(schema["allOf"]), options[i])
			return append(errs, narrowChoices(options[i].(map[string]any), value, path)...)
		}
	}
	return append(errs, fmt.Sprintf("config key %s is %s, not one of: %s", where, jsonText(v), strings.Join(allowed, ", ")))
}

// discriminator finds the key every option pins with a const.
func discriminator(options []any) (string, []any) {
	if len(options) == 0 {
		return "", nil
	}
	first, _ := options[0].(map[string]any)
	props, _ := first["properties"].(map[string]any)
	for _, key := range interp.SortedKeys(props) {
		var consts []any
		for _, o := range options {
			om, _ := o.(map[string]any)
			op, _ := om["properties"].(map[string]any)
			p, _ := op[key].(map[string]any)
			c, ok := p["const"]
			if !ok {
				break
			}
			consts = append(consts, c)
		}
		if len(consts) == len(options) {
			return key, consts
		}
	}
	return "", nil
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// selectiveInputs lists the inputs of a SelectiveAuthenticator. With a
// selection path of two keys ({credentials: {auth_type: ...}}, the usual
// shape) the choice is an object whose oneOf offers each method, its name
// as a const beside that method's inputs under the same object; with one
// key the choice is an enum of the names. Inputs of a method at the top of
// the config follow, not required (only one method is used).
func selectiveInputs(a map[string]any, path string, warnings *[]string) []input {
	sel := strList(a["authenticator_selection_path"])
	auths, _ := a["authenticators"].(map[string]any)
	names := interp.SortedKeys(auths)
	var choice, top []input
	branchInputs := func(name string) []input {
		branch, _ := auths[name].(map[string]any)
		return authInputs(branch, path+".authenticators."+name, warnings)
	}
	topLevel := func(in input) {
		if len(in.path) == 1 {
			in.required = false
			top = append(top, in)
		}
	}
	switch len(sel) {
	case 1:
		enum := make([]any, len(names))
		for i, n := range names {
			enum[i] = n
		}
		choice = []input{{path: sel, required: true, def: map[string]any{"type": "string", "title": "Authentication method", "enum": enum}}}
		for _, name := range names {
			for _, in := range branchInputs(name) {
				topLevel(in)
			}
		}
	case 2:
		group, key := sel[0], sel[1]
		options := make([]any, 0, len(names))
		for _, name := range names {
			props := map[string]any{key: map[string]any{"type": "string", "const": name, "order": int64(0)}}
			required := []any{key}
			for _, in := range branchInputs(name) {
				if len(in.path) != 2 || in.path[0] != group {
					topLevel(in)
					continue
				}
				if _, exists := props[in.path[1]]; exists {
					continue
				}
				in.def["order"] = int64(len(props))
				props[in.path[1]] = in.def
				if in.required {
					required = append(required, in.path[1])
				}
			}
			options = append(options, map[string]any{"type": "object", "title": name, "required": required, "properties": props})
		}
		choice = []input{{path: []string{group}, required: true, def: map[string]any{"type": "object", "title": "Authentication", "oneOf": options}}}
	default:
		*warnings = append(*warnings, fmt.Sprintf("%s.authenticator_selection_path: a path of %d keys is not offered in the derived spec; declare the choice in the spec's connection_specification", path, len(sel)))
	}
	return append(choice, top...)
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

// ErrInvalidSpec is ValidateConfig's error for a connection specification
// that is not a valid JSON schema: the manifest is at fault, not the config.
var ErrInvalidSpec = errors.New("spec.connection_specification: is not a valid JSON schema")

// ValidateConfig checks a config against a connection specification; the
// error names the config key, or wraps ErrInvalidSpec.
func ValidateConfig(connSpec map[string]any, config map[string]any) error {
	connSpec, _ = DeepCopy(connSpec).(map[string]any)
	if choices := narrowChoices(connSpec, config, ""); len(choices) > 0 {
		sort.Strings(choices)
		return errors.New(strings.Join(choices, "; "))
	}
	s, err := CompileJSONSchema(connSpec)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	cfg := map[string]any{}
	for k, v := range config {
		if !strings.HasPrefix(k, "__") {
			cfg[k] = v
		}
	}
	err = s.Validate(cfg)
	if err == nil {
		return nil
	}
	var lines []string
	for _, e := range err.(SchemaErrors) {
		loc := instancePath("", e.Instance)
		switch {
		case e.Keyword == "required":
			lines = append(lines, fmt.Sprintf("config key %s is required", strings.TrimPrefix(loc, ".")))
		case loc == "":
			lines = append(lines, e.Message)
		default:
			lines = append(lines, fmt.Sprintf("config key %s: %s", loc, e.Message))
		}
	}
	sort.Strings(lines)
	return errors.New(strings.Join(lines, "; "))
}

// withAdvancedAuthDefaults is advanced_auth with the one default of its
// schema that is not null: an oauth_connector_input_specification's
// scopes_join_strategy, "space", which Airbyte's runtime writes in the
// SPEC (its model's default) and the platform reads to join scopes.
func withAdvancedAuthDefaults(aa any) any {
	out, _ := DeepCopy(aa).(map[string]any)
	ocs, _ := out["oauth_config_specification"].(map[string]any)
	input, _ := ocs["oauth_connector_input_specification"].(map[string]any)
	if input == nil {
		return aa
	}
	if _, set := input["scopes_join_strategy"]; !set {
		input["scopes_join_strategy"] = "space"
	}
	return out
}
