package differential

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
)

// Connector is one manifest to compare: a curated or written manifest, or
// a connector of Airbyte's catalog (a folder with manifest.yaml,
// metadata.yaml and maybe components.py).
type Connector struct {
	Name     string
	Manifest string // its manifest.yaml
	// Support is the catalog's support level (certified, community); ""
	// for a manifest outside the catalog.
	Support string
	// Components is the connector's components.py, "" without one.
	Components string
}

// ManifestFiles lists the manifests (*.yaml) of a folder as connectors
// outside the catalog, named after their file.
func ManifestFiles(dir string) []Connector {
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	out := make([]Connector, 0, len(files))
	for _, f := range files {
		out = append(out, Connector{Name: strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)), Manifest: f})
	}
	return out
}

// Catalog lists the connectors of a catalog folder (../shared/catalog):
// every folder with a manifest.yaml, named after the folder, with the
// support level its metadata.yaml gives, sorted by name.
func Catalog(dir string) ([]Connector, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Connector
	for _, e := range entries {
		folder := filepath.Join(dir, e.Name())
		m := filepath.Join(folder, "manifest.yaml")
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(m); err != nil {
			continue
		}
		c := Connector{Name: e.Name(), Manifest: m}
		meta, err := manifest.ReadFile(filepath.Join(folder, "metadata.yaml"))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", e.Name(), err)
		}
		c.Support, _ = asMap(meta["data"])["supportLevel"].(string)
		if c.Support == "" {
			return nil, fmt.Errorf("%s: metadata.yaml has no data.supportLevel", e.Name())
		}
		if p := filepath.Join(folder, "components.py"); fileExists(p) {
			c.Components = p
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// injectComponents puts a connector's components.py into a config as the
// platform injects it (the builder, the manifest server and Airbyte's
// platform alike): its text under __injected_components_py, its MD5 under
// __injected_components_py_checksums.
func injectComponents(config map[string]any, components string) error {
	b, err := os.ReadFile(components)
	if err != nil {
		return err
	}
	sum := md5.Sum(b)
	config["__injected_components_py"] = string(b)
	config["__injected_components_py_checksums"] = map[string]any{"md5": hex.EncodeToString(sum[:])}
	return nil
}

// unsafeCodeEnv is the environment under which Airbyte runs a connector's
// injected components.
var unsafeCodeEnv = []string{"AIRBYTE_ENABLE_UNSAFE_CODE=true"}
