module github.com/airbyte-go/source-declarative

go 1.26.8

require (
	github.com/dlclark/regexp2 v1.12.0
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.1.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/oauth2 v0.37.0
	golang.org/x/text v0.23.0
)

require github.com/inconshreveable/mousetrap v1.1.0 // indirect
