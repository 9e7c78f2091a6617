package request

import "testing"

// The expected URLs were printed by Python 3.11's urllib.parse.urljoin
// through the steps of Airbyte's HttpRequester._join_url (path.lstrip("/"),
// a trailing slash on the base), not by this code.
func TestJoinURLAsAirbyte(t *testing.T) {
	cases := []struct{ base, path, want string }{
		{"https://api.example.com/v1/", "https://api.example.com/v1/jobs", "https://api.example.com/v1/jobs"},
		{"https://api.example.com/v1", "users", "https://api.example.com/v1/users"},
		{"https://api.example.com/v1/", "/users", "https://api.example.com/v1/users"},
		{"https://api.example.com/v1", "users/{id}/items?x=1", "https://api.example.com/v1/users/{id}/items?x=1"},
		{"https://api.example.com/v1", "../v2/users", "https://api.example.com/v2/users"},
		{"https://api.example.com/v1/a/", "./b/./c", "https://api.example.com/v1/a/b/c"},
		{"https://api.example.com/v1", "?page=2", "https://api.example.com/v1/?page=2"},
		{"https://api.example.com/v1?key=1", "users", "https://api.example.com/users"},
		{"https://api.example.com/v1", "users//nested///x", "https://api.example.com/v1/users/nested/x"},
		{"https://api.example.com/v1//x", "y", "https://api.example.com/v1/x/y"},
		{"https://api.example.com", "users", "https://api.example.com/users"},
		{"https://api.example.com/v1", "http://other.example.com/x?y=1", "http://other.example.com/x?y=1"},
		{"https://api.example.com/v1", "//cdn.example.com/x", "https://api.example.com/v1/cdn.example.com/x"},
		{"https://api.example.com/v1", "users#frag", "https://api.example.com/v1/users#frag"},
		{"https://api.example.com/v1", "users/..", "https://api.example.com/v1/"},
		{"https://api.example.com/v1", "users/.", "https://api.example.com/v1/users/"},
		{"https://api.example.com/v1", "a/../../../../b", "https://api.example.com/b"},
		{"http://127.0.0.1:8080/api.x.com/v1", "users", "http://127.0.0.1:8080/api.x.com/v1/users"},
		{"https://api.example.com/v1/", "users/", "https://api.example.com/v1/users/"},
		{"https://api.example.com/v1", "", "https://api.example.com/v1"},
		// A path of slashes only is empty once they are dropped: the base as it is.
		{"https://api.example.com/v2", "/", "https://api.example.com/v2"},
		{"https://api.example.com/v2/", "//", "https://api.example.com/v2/"},
		// A base whose path has no slash before its query (found by FuzzManifest).
		{"abc?x", "1.c", "1.c"},
		{"https://h.example.com?q=1", "items", "https://h.example.com/items"},
		// Not Python's: it reads "items" as a scheme and requests "items:search" alone.
		{"https://api.example.com/v1", "items:search", "https://api.example.com/v1/items:search"},
	}
	for _, c := range cases {
		if got := JoinURL(c.base, c.path); got != c.want {
			t.Errorf("JoinURL(%q, %q) = %q, want %q", c.base, c.path, got, c.want)
		}
	}
}

// Next-page URLs (RequestPath) are joined to url_base without dropping their
// leading slash: an absolute path replaces the base's path, as urljoin does.
func TestResolveURLAsAirbyte(t *testing.T) {
	cases := []struct{ base, ref, want string }{
		{"https://api.example.com/v1", "/items?cursor=2", "https://api.example.com/items?cursor=2"},
		{"https://api.example.com/v1", "items?cursor=2", "https://api.example.com/v1/items?cursor=2"},
		{"https://api.example.com/v1", "https://api.example.com/v1/items?cursor=2", "https://api.example.com/v1/items?cursor=2"},
		{"https://api.example.com/v1/", "?cursor=abc%3D%3D", "https://api.example.com/v1/?cursor=abc%3D%3D"},
		{"https://api.example.com/v1", "HTTPS://Other.example.com/X", "https://Other.example.com/X"},
	}
	for _, c := range cases {
		if got := ResolveURL(c.base, c.ref); got != c.want {
			t.Errorf("ResolveURL(%q, %q) = %q, want %q", c.base, c.ref, got, c.want)
		}
	}
}
