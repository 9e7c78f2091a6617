package components

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/airbyte-go/source-declarative/manifest"
)

// Names of Airbyte's runtime (CDK 7.28, custom_code_compiler.py).
const (
	// UnsafeEnv, set to true (any case), lets custom code from outside the
	// image run.
	UnsafeEnv = "AIRBYTE_ENABLE_UNSAFE_CODE"
	// InjectedKey is the config key of components.py's text, as the platform
	// and the builder inject it.
	InjectedKey = "__injected_components_py"
	// ChecksumsKey holds the checksums of InjectedKey's text: md5 and/or sha256.
	ChecksumsKey = "__injected_components_py_checksums"
)

// ErrNotPermitted is AirbyteCustomCodeNotPermittedError, in its words.
var ErrNotPermitted error = notPermitted{}

type notPermitted struct{}

func (notPermitted) Error() string {
	return "Custom connector code is not permitted in this environment. If you need to run custom code, please ask your administrator to set the `AIRBYTE_ENABLE_UNSAFE_CODE` environment variable to 'true' in your Airbyte environment. If you see this message in Airbyte Cloud, your workspace does not allow executing custom connector code."
}

// Code is the components.py whose classes a manifest's custom components
// name.
type Code struct {
	Text string
	Name string // where it came from, for messages: a file, or the config key
}

// Origin is where a command's manifest and components come from.
type Origin struct {
	// ImageManifest: the manifest is the image's own (manifest.ImagePath),
	// whose components.py beside it is trusted, as in Airbyte's connector images.
	ImageManifest  bool
	ComponentsPath string         // --components-path
	Config         map[string]any // the command's config, nil for none
	Getenv         func(string) string
}

// Unsafe tells whether AIRBYTE_ENABLE_UNSAFE_CODE is true.
func (o Origin) Unsafe() bool {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return strings.EqualFold(getenv(UnsafeEnv), "true")
}

// Trusted tells whether custom components may run without
// AIRBYTE_ENABLE_UNSAFE_CODE: only those of the image's own manifest, with no
// manifest injected in the config (the CDK's factory's rule).
func (o Origin) Trusted() bool {
	if !o.ImageManifest {
		return false
	}
	_, injected := o.Config[manifest.InjectedKey]
	return !injected
}

// FindCode returns the components.py of a command, or nil when there is
// none, first match wins as in Airbyte's runtime: the config's
// __injected_components_py (which needs AIRBYTE_ENABLE_UNSAFE_CODE and its
// checksums, checked before anything runs), --components-path (which needs
// AIRBYTE_ENABLE_UNSAFE_CODE), then the components.py beside the image's
// manifest.
func FindCode(o Origin) (*Code, error) {
	if text, _ := o.Config[InjectedKey].(string); text != "" {
		if !o.Unsafe() {
			return nil, ErrNotPermitted
		}
		if err := checkSums(text, o.Config[ChecksumsKey]); err != nil {
			return nil, err
		}
		return &Code{Text: text, Name: InjectedKey}, nil
	}
	if o.ComponentsPath != "" && !o.ImageManifest {
		if !o.Unsafe() {
			return nil, ErrNotPermitted
		}
		b, err := os.ReadFile(o.ComponentsPath)
		if err != nil {
			return nil, fmt.Errorf("--components-path: %v", err)
		}
		return &Code{Text: string(b), Name: o.ComponentsPath}, nil
	}
	if o.ImageManifest {
		path := filepath.Join(filepath.Dir(manifest.ImagePath), "components.py")
		if b, err := os.ReadFile(path); err == nil {
			return &Code{Text: string(b), Name: path}, nil
		}
	}
	return nil, nil
}

// checkSums checks the injected code against its checksums, as the CDK's
// validate_python_code does: at least one is required, each of a known kind.
func checkSums(text string, v any) error {
	sums, _ := v.(map[string]any)
	if len(sums) == 0 {
		return fmt.Errorf("%s: a checksum is required to validate the code in %s (md5 or sha256)", ChecksumsKey, InjectedKey)
	}
	kinds := make([]string, 0, len(sums))
	for k := range sums {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		var sum []byte
		switch kind {
		case "md5":
			s := md5.Sum([]byte(text))
			sum = s[:]
		case "sha256":
			s := sha256.Sum256([]byte(text))
			sum = s[:]
		default:
			return fmt.Errorf("%s: unsupported checksum type %q; supported checksum types are md5 and sha256", ChecksumsKey, kind)
		}
		want, _ := sums[kind].(string)
		if hex.EncodeToString(sum) != want {
			return fmt.Errorf("%s: %s checksum does not match the code in %s (expected %s, got %s): the code may have been tampered with", ChecksumsKey, kind, InjectedKey, want, hex.EncodeToString(sum))
		}
	}
	return nil
}

// Permit says whether the custom components of src may run from origin,
// naming the first one when they may not.
func Permit(src *manifest.Source, o Origin) error {
	if len(src.Custom) == 0 || o.Trusted() || o.Unsafe() {
		return nil
	}
	return fmt.Errorf("%s: %w", src.Custom[0].Path, ErrNotPermitted)
}
