package schema

import (
	"encoding/json"
	"testing"
)

// TestObjectReadBackAsWritten: an inferred schema the CDK made reads back
// with its keys in order, nested objects too, and writes as it was read.
func TestObjectReadBackAsWritten(t *testing.T) {
	const in = `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"z":{"type":["string","null"]},"a":{"type":"number"}},"required":["z"]}`
	var o Object
	if err := json.Unmarshal([]byte(in), &o); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(&o)
	if err != nil || string(out) != in {
		t.Errorf("got %s (%v)\nwant %s", out, err, in)
	}
}
