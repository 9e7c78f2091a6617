package auth

import (
	"strings"

	"github.com/airbyte-go/source-declarative/lang/interp"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// newSelective builds the authenticator a SelectiveAuthenticator's config
// value names, as if it were written in its place.
func newSelective(a *manifest.Auth, env *Env) (Authenticator, error) {
	chosen, err := func() (*manifest.Auth, error) {
		if env.ConfigMu != nil {
			env.ConfigMu.Lock()
			defer env.ConfigMu.Unlock()
		}
		return Select(a, env.Config)
	}()
	if err != nil {
		return nil, err
	}
	return New(chosen, env)
}

// Select returns the authenticator of a SelectiveAuthenticator that the
// config value at its selection path names (nil for NoAuth). A missing
// value, or one naming no authenticator, is a config error listing the
// names allowed; one naming an authenticator whose template does not
// compile is a system_error, as in Airbyte (the manifest is wrong).
func Select(a *manifest.Auth, config map[string]any) (*manifest.Auth, error) {
	s := a.Selective
	key := strings.Join(s.SelectionPath, ".")
	var v any = config
	for _, k := range s.SelectionPath {
		m, ok := v.(map[string]any)
		if !ok {
			v = nil
			break
		}
		v = m[k]
	}
	names := strings.Join(s.Names, ", ")
	if v == nil {
		return nil, failure.Config("config key %s is missing: it chooses the authentication method of %s (one of: %s)", key, a.Path, names)
	}
	name := interp.String(v)
	chosen, ok := s.Authenticators[name]
	if !ok {
		return nil, failure.Config("config key %s is %q, which names no authentication method of %s (one of: %s)", key, name, a.Path, names)
	}
	return chosen, nil
}
