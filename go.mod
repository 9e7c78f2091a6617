module github.com/airbyte-go/source-declarative

go 1.26.8

require (
	github.com/dlclark/regexp2 v1.12.0
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1
	golang.org/x/oauth2 v0.37.0
	golang.org/x/text v0.23.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/kr/pretty v0.3.1 // indirect
	gopkg.in/check.v1 v1.0.0-20190902080502-41f04d3bba15 // indirect
)
