package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"

	"github.com/airbyte-go/source-declarative/components"
	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
)

// origin says where the command's manifest and components come from.
func (a *app) origin(config map[string]any) components.Origin {
	image := false
	if a.manifestPath == "" {
		_, err := os.Stat(manifest.ImagePath)
		image = err == nil
	}
	return components.Origin{ImageManifest: image, ComponentsPath: a.componentsPath, Config: config}
}

// startComponents starts the components host when the manifest names custom
// components, once Airbyte's runtime would let them run: the image's own
// components, or AIRBYTE_ENABLE_UNSAFE_CODE with the code injected (with its
// checksums) or given by --components-path. Injected code is checked even
// when the manifest names no component, as the CDK checks it. The host
// answers for the spec's config rules first when they are custom (config is
// then what they make), and builds the components with the final config.
func (a *app) startComponents(ctx context.Context, src *manifest.Source, raw, config map[string]any) (*components.Host, map[string]any, *setupError) {
	origin := a.origin(config)
	code, err := components.FindCode(origin)
	if errors.Is(err, components.ErrNotPermitted) && len(src.Custom) > 0 {
		err = fmt.Errorf("%s: %w", src.Custom[0].Path, err) // the component that needs it
	}
	if err != nil {
		return nil, nil, &setupError{message: err.Error(), checkFails: true}
	}
	if len(src.Custom) == 0 {
		return nil, config, nil
	}
	if err := components.Permit(src, origin); err != nil {
		return nil, nil, &setupError{message: err.Error(), checkFails: true}
	}
	python, err := components.FindPython(a.python, nil)
	if err != nil {
		return nil, nil, &setupError{message: err.Error(), checkFails: true}
	}
	h, err := components.Start(ctx, components.Options{Python: python, Code: code, Manifest: raw, Config: config,
		Log: a.componentsLog, Auth: a.componentsAuth, ConfigUpdated: a.componentsConfig})
	if err != nil {
		return nil, nil, componentsFailure(err)
	}
	if len(src.CustomConfig) > 0 {
		migrated, transformed, err := h.ConfigRules(ctx, src.CustomConfig[0], config)
		if err != nil {
			h.Close()
			return nil, nil, componentsFailure(err)
		}
		if err := a.migrated(migrated, !reflect.DeepEqual(migrated, config)); err != nil {
			h.Close()
			return nil, nil, &setupError{message: err.Error()}
		}
		config = transformed
	}
	if err := h.Build(ctx, config, a.streamsToBuild(src)); err != nil {
		h.Close()
		return nil, nil, buildFailure(err)
	}
	return h, config, nil
}

// streamsToBuild are the streams whose custom components a command calls:
// every stream's (nil), as Airbyte's runtime builds them all, but for a
// test read, the builder's edit-and-read loop, which builds the one stream
// it reads, and none for a stream the CDK reads whole or test-reads (its
// read makes its own), so that a test read pays for the one source the
// CDK's builder pays for.
func (a *app) streamsToBuild(src *manifest.Source) []string {
	if a.stream == "" {
		return nil
	}
	for _, st := range src.Streams {
		if st.Name == a.stream {
			if st.Python != nil || st.PythonTestRead != nil {
				return []string{}
			}
			return []string{st.Name}
		}
	}
	return nil // a stream a dynamic stream makes: every one
}

// componentsFailure is a failure to start the host or to run the spec's
// config rules: the manifest, the config or the Python beside us are the
// user's to fix.
func componentsFailure(err error) *setupError {
	return &setupError{message: err.Error(), checkFails: true}
}

// buildFailure is what the connector's code raised while its components
// were built (a constructor's TypeError, a KeyError on the config): a
// system_error unless the code raised an AirbyteTracedException of another
// type, as the CDK reports an exception of the streams it builds.
func buildFailure(err error) *setupError {
	failure := protocol.SystemError
	var ce *components.Error
	if errors.As(err, &ce) {
		failure = ce.FailureType()
	}
	return &setupError{message: err.Error(), checkFails: true, failure: failure}
}

// componentsLog prints what the host logs, through the runner once there is
// one (a test read keeps its warnings).
func (a *app) componentsLog(level, msg string) {
	if a.runner != nil {
		a.runner.Log(level, msg)
		return
	}
	if level == "DEBUG" && !a.out.Debugging() {
		return
	}
	a.out.Log(level, msg)
}

// componentsAuth authenticates a request of a stream the CDK reads whole,
// with the runner's authenticator.
func (a *app) componentsAuth(ctx context.Context, req *components.AuthRequest) (*components.AuthAnswer, error) {
	if a.runner == nil {
		return nil, fmt.Errorf("no runner to authenticate stream %s", req.Stream)
	}
	return a.runner.AuthenticateForPython(ctx, req)
}

// componentsConfig keeps what the connector's code changed in the config
// (a token it rotated): the runner prints and saves it; a change made
// before there is a runner (while the components are built) waits for it.
func (a *app) componentsConfig(changes []components.ConfigChange) {
	a.configMu.Lock()
	defer a.configMu.Unlock()
	a.configChanges = append(a.configChanges, changes...)
	a.takeConfigChanges()
}

// takeConfigChanges gives the runner the config changes waiting, once there
// is one; configMu is held.
func (a *app) takeConfigChanges() {
	if a.runner == nil || len(a.configChanges) == 0 {
		return
	}
	changes := a.configChanges
	a.configChanges = nil
	if err := a.runner.TakeConfigChanges(changes); err != nil {
		a.runner.Log(protocol.LevelWarn, "the config the connector's code changed could not be kept: "+err.Error())
	}
}

// closeComponents ends the components host, if one runs.
func (a *app) closeComponents() {
	if a.host != nil {
		a.host.Close()
		a.host = nil
	}
}
