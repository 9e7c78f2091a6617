package request

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// pythonIsPrivate is ipaddress.ip_address(a).is_private as Python 3.13 (the
// reference's) answers it, printed by running it on each address.
var pythonIsPrivate = []struct {
	addr    string
	private bool
}{
	{"0.0.0.0", true},
	{"0.255.255.255", true},
	{"1.1.1.1", false},
	{"8.8.8.8", false},
	{"9.255.255.255", false},
	{"10.0.0.1", true},
	{"10.255.255.255", true},
	{"11.0.0.0", false},
	{"100.63.255.255", false},
	{"100.64.0.1", false},
	{"100.127.255.255", false},
	{"127.0.0.1", true},
	{"127.255.255.254", true},
	{"128.0.0.1", false},
	{"169.254.0.1", true},
	{"169.254.169.254", true},
	{"169.255.0.1", false},
	{"172.15.255.255", false},
	{"172.16.0.1", true},
	{"172.31.255.255", true},
	{"172.32.0.0", false},
	{"192.0.0.1", true},
	{"192.0.0.8", true},
	{"192.0.0.9", false},
	{"192.0.0.10", false},
	{"192.0.0.11", true},
	{"192.0.0.170", true},
	{"192.0.0.171", true},
	{"192.0.0.172", true},
	{"192.0.1.1", false},
	{"192.0.2.1", true},
	{"192.88.99.1", false},
	{"192.167.255.255", false},
	{"192.168.1.1", true},
	{"192.169.0.0", false},
	{"198.17.255.255", false},
	{"198.18.0.1", true},
	{"198.19.255.255", true},
	{"198.20.0.0", false},
	{"198.51.100.7", true},
	{"203.0.113.9", true},
	{"203.0.114.0", false},
	{"223.255.255.255", false},
	{"224.0.0.1", false},
	{"239.255.255.255", false},
	{"240.0.0.1", true},
	{"255.255.255.254", true},
	{"255.255.255.255", true},
	{"::", true},
	{"::1", true},
	{"::2", false},
	{"::ffff:127.0.0.1", true},
	{"::ffff:8.8.8.8", false},
	{"::ffff:10.1.2.3", true},
	{"::ffff:100.64.0.1", false},
	{"64:ff9b::808:808", false},
	{"64:ff9b:1::1", true},
	{"100::1", true},
	{"100::ffff:ffff:ffff:ffff", true},
	{"100:0:0:1::", false},
	{"2001::1", true},
	{"2001:1::1", false},
	{"2001:1::2", false},
	{"2001:1::3", true},
	{"2001:2::1", true},
	{"2001:3::1", false},
	{"2001:4:112::1", false},
	{"2001:4:113::1", true},
	{"2001:10::1", true},
	{"2001:20::1", false},
	{"2001:2f::1", false},
	{"2001:30::1", false},
	{"2001:3f::1", false},
	{"2001:40::1", true},
	{"2001:1ff::1", true},
	{"2001:200::1", false},
	{"2001:db8::1", true},
	{"2001:db9::1", false},
	{"2002::1", true},
	{"2002:ffff::1", true},
	{"2003::1", false},
	{"2606:4700:4700::1111", false},
	{"3ffe::1", false},
	{"3fff::1", true},
	{"3fff:fff::1", true},
	{"3fff:1000::1", false},
	{"fbff::1", false},
	{"fc00::1", true},
	{"fd12:3456::1", true},
	{"fe00::1", false},
	{"fe7f::1", false},
	{"fe80::1", true},
	{"febf::1", true},
	{"fec0::1", false},
	{"ff02::1", false},
	{"ffff::1", false},
}

func TestIsPrivateAsPythonIPAddress(t *testing.T) {
	for _, c := range pythonIsPrivate {
		if got := isPrivate(netip.MustParseAddr(c.addr)); got != c.private {
			t.Errorf("%s: private %v, Python says %v", c.addr, got, c.private)
		}
	}
}

// The dial check reads the address the dialer is about to connect to.
func TestPublicOnlyRefusesPrivateAddresses(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:443":           "127.0.0.1 belongs to a private network",
		"[::ffff:10.0.0.1]:443":   "10.0.0.1 belongs to a private network",
		"[fe80::1%eth0]:443":      "fe80::1 belongs to a private network",
		"[::1]:80":                "::1 belongs to a private network",
		"8.8.8.8:443":             "",
		"[2606:4700::1111]:443":   "",
		"[::ffff:100.64.0.1]:443": "",
	} {
		got := ""
		if err := publicOnly("tcp", addr, nil); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s: %q, want %q", addr, got, want)
		}
	}
}

// A redirect to http is refused in cloud mode like a first request to
// http: every hop goes through the transport.
func TestCloudRefusesARedirectToHTTP(t *testing.T) {
	var plainRequests int
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { plainRequests++ }))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/moved?token=x", http.StatusFound)
	}))
	defer secure.Close()
	c := NewClient(nil)
	c.HTTP.Transport = httpsOnly{secure.Client().Transport}
	req, _ := http.NewRequest("GET", secure.URL+"/s", nil)
	_, err := c.Send(req.Context(), func() (*http.Request, error) { return req, nil }, nil)
	host := strings.TrimPrefix(plain.URL, "http://")
	want := `Invalid Protocol Scheme: The endpoint that data is being requested from (host "` + host + `") is using an invalid or insecure protocol 'http'. Valid protocol schemes: https`
	if f := failure.As(err); f == nil || f.Message != want || f.Failure != "config_error" {
		t.Fatalf("error %v, want config_error %q", err, want)
	}
	if plainRequests != 0 {
		t.Errorf("%d requests reached the http server", plainRequests)
	}
}
