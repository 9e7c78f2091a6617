package cli

import (
	"fmt"
	"path/filepath"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/configrules"
)

// normalize applies the manifest's config migrations, then its config
// transformations, as Airbyte does before anything reads the config. A
// migration that changes the config is printed whole as one CONTROL message
// and written back to the --config file, except in test reads, where the
// config (the builder's testing values) changes in memory only.
func (a *app) normalize(rules *manifest.ConfigRules, config map[string]any) (map[string]any, error) {
	migrated, changed, err := configrules.Migrate(rules, config)
	if err != nil {
		return nil, err
	}
	if err := a.migrated(migrated, changed); err != nil {
		return nil, err
	}
	return configrules.Transform(rules, migrated)
}

// migrated prints a config that its migrations changed as one CONTROL
// message and writes it back to the --config file (not in test reads).
func (a *app) migrated(migrated map[string]any, changed bool) error {
	if !changed || a.testReading {
		return nil
	}
	if err := a.out.ControlConfig(migrated); err != nil {
		return err
	}
	// The CONTROL message is what the platform keeps; a config file that
	// cannot be written (mounted read-only) does not stop the command.
	if err := writeFileAtomic(a.configPath, migrated); err != nil {
		a.out.Log(protocol.LevelWarn, fmt.Sprintf("the migrated config could not be written back to %s: %v", filepath.Base(a.configPath), err))
	}
	return nil
}

// validateRules checks the config against the manifest's config validations.
func (a *app) validateRules(rules *manifest.ConfigRules, config map[string]any) error {
	return configrules.Validate(rules, config, func(rule, key string) {
		a.out.Log(protocol.LevelInfo, fmt.Sprintf("%s: config key %s is not set; validation skipped", rule, key))
	})
}
