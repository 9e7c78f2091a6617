package components

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
)

// ConfigChange is a value the connector's own code changed in its config
// (a token its authenticator refreshed), at a path of config keys.
type ConfigChange struct {
	Path  []string
	Value any
}

// Apply writes the change into config, making the objects on its path.
func (c ConfigChange) Apply(config map[string]any) { manifest.Set(config, c.Path, c.Value) }

// TakeConfig is a config the host's Python printed as Airbyte's CONTROL
// message (the CDK's OAuth authenticators print one when they rotate a
// refresh token): what it changes since the config the host last had goes
// to Options.ConfigUpdated, so that Go keeps it, masks it and prints it,
// and the platform does not lose a single-use refresh token the host spent.
// The same config twice (the CDK prints it and also queues it as a
// message of the stream it reads) is one change.
func (h *Host) TakeConfig(config map[string]any) {
	h.configMu.Lock()
	var changes []ConfigChange
	diffConfig(nil, h.config, config, &changes)
	h.config = config
	h.configMu.Unlock()
	if len(changes) > 0 && h.opts.ConfigUpdated != nil {
		h.opts.ConfigUpdated(changes)
	}
}

// knowConfig is the config the host has been given.
func (h *Host) knowConfig(config map[string]any) {
	h.configMu.Lock()
	h.config = config
	h.configMu.Unlock()
}

// diffConfig adds to changes every value of now that was not in before,
// objects compared key by key.
func diffConfig(path []string, before, now map[string]any, changes *[]ConfigChange) {
	for k, v := range now {
		at := append(path[:len(path):len(path)], k)
		old, had := before[k]
		if sub, ok := v.(map[string]any); ok {
			if oldSub, ok := old.(map[string]any); ok {
				diffConfig(at, oldSub, sub, changes)
				continue
			}
		}
		if !had || !reflect.DeepEqual(old, v) {
			*changes = append(*changes, ConfigChange{Path: at, Value: v})
		}
	}
}

// ConnectorConfig reads a CONTROL CONNECTOR_CONFIG message, for its config.
func ConnectorConfig(line []byte) (map[string]any, bool) {
	text := strings.TrimSpace(string(line))
	if !strings.HasPrefix(text, `{"type":"CONTROL"`) && !strings.HasPrefix(text, `{"type": "CONTROL"`) {
		return nil, false
	}
	var m struct {
		Control struct {
			Type            string `json:"type"`
			ConnectorConfig struct {
				Config json.RawMessage `json:"config"`
			} `json:"connectorConfig"`
		} `json:"control"`
	}
	if err := json.Unmarshal([]byte(text), &m); err != nil || m.Control.Type != "CONNECTOR_CONFIG" {
		return nil, false
	}
	config, err := configObject(m.Control.ConnectorConfig.Config)
	return config, err == nil
}
