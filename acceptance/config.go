// Package acceptance is a local runner of the Connector Acceptance Tests: it
// reads acceptance-test-config.yml and checks a connector command the way
// Airbyte's acceptance tests check an image (spec, connection, discovery,
// basic_read, full_refresh, incremental, and that no secret reaches the output).
package acceptance

import (
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
)

// Config is acceptance-test-config.yml.
type Config struct {
	ConnectorImage      string `yaml:"connector_image"`
	TestStrictnessLevel string `yaml:"test_strictness_level"`
	Tests               struct {
		Spec        *Suite `yaml:"spec"`
		Connection  *Suite `yaml:"connection"`
		Discovery   *Suite `yaml:"discovery"`
		BasicRead   *Suite `yaml:"basic_read"`
		FullRefresh *Suite `yaml:"full_refresh"`
		Incremental *Suite `yaml:"incremental"`
	} `yaml:"acceptance_tests"`
}

// Suite is the list of tests of one kind.
type Suite struct {
	Tests []Test `yaml:"tests"`
}

// Test is one acceptance test.
type Test struct {
	SpecPath              string `yaml:"spec_path"`
	ConfigPath            string `yaml:"config_path"`
	Status                string `yaml:"status"`
	ConfiguredCatalogPath string `yaml:"configured_catalog_path"`
	ExpectRecords         *struct {
		Path       string `yaml:"path"`
		ExactOrder bool   `yaml:"exact_order"`
	} `yaml:"expect_records"`
	FutureState *struct {
		FutureStatePath string `yaml:"future_state_path"`
	} `yaml:"future_state"`
}

// LoadConfig reads an acceptance-test-config.yml.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &c, nil
}
