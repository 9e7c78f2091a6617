package corpus

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/airbyte-go/source-declarative/lang/interp"
)

func TestRewriteURLs(t *testing.T) {
	var raw map[string]any
	json.Unmarshal([]byte(`{
	  "definitions": {"requester": {"url_base": "https://api.x.com/v1", "path": "https://not-a-url-field.com"}},
	  "streams": [{"retriever": {"requester": {"url": "https://{{ config['sub'] }}.x.com/{{ 'a' if config.b else 'http://b.com' }}",
	    "authenticator": {"token_refresh_endpoint": "https://auth.x.com/token", "login_requester": {"url_base": "http://login.x.com"}}}},
	    "schema": {"properties": {"url": {"type": "string"}}}}]}`), &raw)
	got := RewriteURLs(raw, "http://127.0.0.1:9")
	b, _ := json.Marshal(got)
	want := `{"definitions":{"requester":{"path":"https://not-a-url-field.com","url_base":"http://127.0.0.1:9/api.x.com/v1"}},` +
		`"streams":[{"retriever":{"requester":{"authenticator":{"login_requester":{"url_base":"http://127.0.0.1:9/login.x.com"},` +
		`"token_refresh_endpoint":"http://127.0.0.1:9/auth.x.com/token"},` +
		`"url":"http://127.0.0.1:9/{{ config['sub'] }}.x.com/{{ 'a' if config.b else 'http://127.0.0.1:9/b.com' }}"}},` +
		`"schema":{"properties":{"url":{"type":"string"}}}}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if raw["definitions"].(map[string]any)["requester"].(map[string]any)["url_base"] != "https://api.x.com/v1" {
		t.Error("the raw manifest must be left unchanged")
	}
}

func TestPointConfig(t *testing.T) {
	const mock = "http://127.0.0.1:9"
	var raw map[string]any
	json.Unmarshal([]byte(`{"streams": [
	  {"requester": {"url_base": "{{ config['api_url'] }}/resources"}},
	  {"requester": {"url_base": "{{ config['api_url'] }}/other"}},
	  {"requester": {"url_base": "{{ config['region']['url_base'] }}", "path": "x"}},
	  {"requester": {"url_base": "{{ config['host'] }}"}},
	  {"requester": {"url_base": "http://127.0.0.1:9/api.x.com/{{ config['org'] }}"}}]}`), &raw)
	config := map[string]any{"api_url": "https://rest.x.io/", "region": map[string]any{"url_base": "https://eu.x.com/v3"}, "host": "x.example.com", "org": "acme"}
	wrapped := PointConfig(raw, config, map[string]bool{"region.url_base": true}, mock)
	wantConfig := map[string]any{"api_url": mock + "/rest.x.io/", "region": map[string]any{"url_base": "https://eu.x.com/v3"}, "host": mock + "/x.example.com", "org": "acme"}
	if !reflect.DeepEqual(config, wantConfig) {
		t.Errorf("config %v, want %v", config, wantConfig)
	}
	if want := []string{"{{ config['region']['url_base'] }}"}; !reflect.DeepEqual(wrapped, want) {
		t.Errorf("wrapped %q, want %q", wrapped, want)
	}
	got := raw["streams"].([]any)[2].(map[string]any)["requester"].(map[string]any)["url_base"]
	if want := "{{ (config['region']['url_base']) | replace('http://', 'http://127.0.0.1:9/') | replace('https://', 'http://127.0.0.1:9/') }}"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	tpl, err := interp.Compile(got.(string), "url_base")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := tpl.Render(interp.Vars{"config": config}); s != mock+"/eu.x.com/v3" || err != nil {
		t.Errorf("the wrapped URL renders %q %v", s, err)
	}
}
