package corpus

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestSamplerConfig(t *testing.T) {
	spec := map[string]any{}
	json.Unmarshal([]byte(`{
	  "type": "object",
	  "required": ["api_key", "start_date", "subdomain", "region", "status", "athlete_id", "credentials", "created_date"],
	  "properties": {
	    "api_key": {"type": "string", "airbyte_secret": true},
	    "client_secret": {"type": "string", "airbyte_secret": true, "pattern": "^[0-9a-f]+$"},
	    "start_date": {"type": "string", "format": "date-time", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"},
	    "end_date": {"type": "string", "format": "date", "pattern": "^[0-9]{2}-[0-9]{2}-[0-9]{4}$"},
	    "created_date": {"type": "integer", "examples": [1666261656]},
	    "subdomain": {"type": "string", "pattern": "^[a-z]+$"},
	    "region": {"type": "string", "enum": ["eu", "us"]},
	    "status": {"type": "string", "default": "active"},
	    "athlete_id": {"type": "integer", "examples": ["17831421"]},
	    "credentials": {"type": "object", "oneOf": [
	      {"type": "object", "required": ["client_id"], "properties": {
	        "auth_type": {"type": "string", "const": "oauth"},
	        "client_id": {"type": "string", "examples": ["abc"]},
	        "audience": {"type": "string"},
	        "unused": {"type": "string"}}},
	      {"type": "object", "properties": {"auth_type": {"type": "string", "const": "token"}}}]},
	    "page_size": {"type": "integer", "minimum": 10},
	    "not_read": {"type": "string"}
	  }}`), &spec)
	s := &Sampler{Now: time.Date(2024, 5, 10, 15, 30, 0, 0, time.UTC), Reads: map[string]bool{
		"client_secret": true, "end_date": true, "page_size": true, "credentials": true, "credentials.audience": true}}
	got := s.Config(spec)
	want := map[string]any{
		"api_key":       "mock-secret-api_key",
		"client_secret": "01234567",
		"start_date":    "2024-05-07T00:00:00Z",
		"end_date":      "10-05-2024",
		"created_date":  int64(1715040000),
		"subdomain":     "abcdefgh",
		"region":        "eu",
		"status":        "active",
		"athlete_id":    int64(17831421),
		"credentials":   map[string]any{"auth_type": "oauth", "client_id": "abc", "audience": "mock-audience"},
		"page_size":     int64(10),
	}
	if !reflect.DeepEqual(got, want) {
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		t.Errorf("got  %s\nwant %s", a, b)
	}
	if wantPinned := map[string]bool{"region": true, "credentials.auth_type": true}; !reflect.DeepEqual(s.Pinned, wantPinned) {
		t.Errorf("pinned %v, want %v", s.Pinned, wantPinned)
	}
}
