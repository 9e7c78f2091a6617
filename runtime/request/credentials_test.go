package request

import "testing"

// The rule of design decision 9, case by case: the host rule of Go's
// http.Client on redirects (the host or a subdomain), the scheme and port
// rule of Python's requests (same scheme and port, or http:80 to https:443).
func TestCredentialsFollow(t *testing.T) {
	for _, c := range []struct {
		base, target string
		follow       bool
		why          string
	}{
		{"https://api.example.com/v1", "https://api.example.com/v1/next?page=2", true, ""},
		{"https://api.example.com", "https://API.Example.com./x", true, ""},
		{"https://api.example.com", "https://eu.api.example.com/x", true, ""},
		{"https://api.example.com", "https://a.b.api.example.com/x", true, ""},
		{"https://api.example.com", "https://api.example.com:443/x", true, ""},
		{"http://api.example.com", "https://api.example.com/x", true, ""},
		{"http://api.example.com:80", "https://api.example.com:443/x", true, ""},
		{"https://api.example.com", "https://example.com/x", false, `host "example.com" is not url_base's host "api.example.com" nor a subdomain of it`},
		{"https://api.example.com", "https://evilapi.example.com/x", false, `host "evilapi.example.com" is not url_base's host "api.example.com" nor a subdomain of it`},
		{"https://api.example.com", "https://api.example.com.evil.test/x", false, `host "api.example.com.evil.test" is not url_base's host "api.example.com" nor a subdomain of it`},
		{"https://api.example.com", "http://api.example.com/x", false, "it is http:// while url_base is https://"},
		{"https://api.example.com", "https://api.example.com:8443/x", false, "https://api.example.com:8443 is not on url_base's scheme and port (https://api.example.com)"},
		{"http://api.example.com:8080", "https://api.example.com:8443/x", false, "https://api.example.com:8443 is not on url_base's scheme and port (http://api.example.com:8080)"},
		{"https://10.0.0.1", "https://x.10.0.0.1/", false, `host "x.10.0.0.1" is not url_base's host "10.0.0.1" nor a subdomain of it`},
		{"https://[::1]:8443", "https://[::1]:8443/x", true, ""},
		{"https://api.example.com", "/relative", false, "the URL is not absolute"},
		{"{{ broken", "https://api.example.com", false, "url_base is not an absolute URL"},
	} {
		follow, why := CredentialsFollow(c.base, c.target)
		if follow != c.follow || why != c.why {
			t.Errorf("%s -> %s: %v %q, want %v %q", c.base, c.target, follow, why, c.follow, c.why)
		}
	}
}
