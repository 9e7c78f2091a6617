package genapi

import "testing"

func TestFromPattern(t *testing.T) {
	for pattern, want := range map[string]string{
		`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`:   "0000-00-00",
		`^[0-9]{8}T[0-9]{6}Z$`:           "00000000T000000Z",
		`^[a-z0-9_\-]+$`:                 "-0123456",
		`^[0-9a-fA-F]+$`:                 "01234567",
		`^(EU|US)-[A-Z]{2}$`:             "EU-AA",
		`^https://[a-z]+\.example\.com$`: "https://abcdefgh.example.com",
		`^x?y*$`:                         "xyyyyyyyy",
	} {
		got, ok := FromPattern(pattern)
		if !ok || got != want {
			t.Errorf("%s: got %q %v, want %q", pattern, got, ok, want)
		}
	}
	for _, bad := range []string{`(?=a)`, `[`} {
		if _, ok := FromPattern(bad); ok {
			t.Errorf("%s: want not ok", bad)
		}
	}
}
