package request

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"syscall"

	"github.com/airbyte-go/source-declarative/runtime/failure"
)

// CloudMode tells whether the platform runs the connector in Airbyte Cloud:
// DEPLOYMENT_MODE is cloud (in any case), as the CDK's is_cloud_environment
// reads it.
func CloudMode() bool {
	return strings.EqualFold(os.Getenv("DEPLOYMENT_MODE"), "cloud")
}

// forCloud makes t what the CDK's request filter makes of Airbyte's runtime
// in the cloud: only https URLs are requested (redirects included), and no
// private, loopback or link-local address (Python's is_private). The
// address is checked on the connection being made, after the name was
// resolved, so that an answer that changes between a check and the request
// cannot slip through; the reference resolves the name itself before the
// request. Proxies from the environment are not used: the connection would
// be the proxy's, and its address is no sign of where the request goes.
func forCloud(t *http.Transport, dialer *net.Dialer) http.RoundTripper {
	d := *dialer
	d.Control = publicOnly
	t.Proxy = nil
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		var private *privateAddress
		if errors.As(err, &private) {
			host, _, _ := net.SplitHostPort(addr)
			return nil, failure.Config("Invalid URL endpoint: The endpoint that data is being requested from (host %q, address %s) belongs to a private network. Source connectors only support requesting data from public API endpoints.",
				host, private.addr)
		}
		return conn, err
	}
	return httpsOnly{t}
}

// httpsOnly refuses a request whose URL is not https.
type httpsOnly struct{ next http.RoundTripper }

func (h httpsOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.EqualFold(req.URL.Scheme, "https") {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, failure.Config("Invalid Protocol Scheme: The endpoint that data is being requested from (host %q) is using an invalid or insecure protocol '%s'. Valid protocol schemes: https",
			req.URL.Host, req.URL.Scheme)
	}
	return h.next.RoundTrip(req)
}

// privateAddress is the refusal of a connection to a private address.
type privateAddress struct{ addr netip.Addr }

func (p *privateAddress) Error() string {
	return fmt.Sprintf("%s belongs to a private network", p.addr)
}

// publicOnly is a net.Dialer's Control: it refuses to connect to an address
// that Python's ipaddress calls private.
func publicOnly(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("cannot check the address %q: %v", address, err)
	}
	if addr := ap.Addr().WithZone("").Unmap(); isPrivate(addr) {
		return &privateAddress{addr}
	}
	return nil
}

// isPrivate is Python 3.13's ipaddress is_private, which the CDK's filter
// asks: any block the IANA special-purpose registries call not globally
// reachable (loopback, link-local, RFC 1918, documentation, benchmarking,
// unique local, ...), but for the exceptions they list; 100.64.0.0/10
// (shared address space) and multicast are not private. An IPv4-mapped IPv6
// address is its IPv4 address.
func isPrivate(a netip.Addr) bool {
	a = a.Unmap()
	private, exceptions := privateIPv6, publicIPv6
	if a.Is4() {
		private, exceptions = privateIPv4, publicIPv4
	}
	return within(a, private) && !within(a, exceptions)
}

func within(a netip.Addr, blocks []netip.Prefix) bool {
	for _, b := range blocks {
		if b.Contains(a) {
			return true
		}
	}
	return false
}

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// The blocks of Python 3.13's ipaddress (_IPv4Constants, _IPv6Constants).
var (
	privateIPv4 = prefixes("0.0.0.0/8", "10.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
		"192.0.0.170/31", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
		"240.0.0.0/4", "255.255.255.255/32")
	publicIPv4  = prefixes("192.0.0.9/32", "192.0.0.10/32")
	privateIPv6 = prefixes("::1/128", "::/128", "::ffff:0:0/96", "64:ff9b:1::/48", "100::/64", "2001::/23",
		"2001:db8::/32", "2002::/16", "3fff::/20", "fc00::/7", "fe80::/10")
	publicIPv6 = prefixes("2001:1::1/128", "2001:1::2/128", "2001:3::/32", "2001:4:112::/48", "2001:20::/28",
		"2001:30::/28")
)
