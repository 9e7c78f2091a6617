package genapi

import (
	"net"
	"strings"
	"sync"
)

// Offline is env for a connector run against the API, so that nothing
// leaves the machine: HTTP_PROXY and HTTPS_PROXY at a closed local port, and
// NO_PROXY=127.0.0.1,localhost, so that the API (on loopback) is reached
// directly and a request to any other host (a manifest's URL the API does
// not stand in for) fails at once. Both spellings are set, as Python's
// urllib reads the lower-case ones first; ALL_PROXY is dropped.
func Offline(env []string) []string {
	proxy := "http://127.0.0.1:" + closedPort()
	set := map[string]string{
		"HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "NO_PROXY": "127.0.0.1,localhost",
	}
	out := make([]string, 0, len(env)+6)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		if _, ours := set[upper]; ours || upper == "ALL_PROXY" {
			continue
		}
		out = append(out, kv)
	}
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"} {
		out = append(out, name+"="+set[name], strings.ToLower(name)+"="+set[name])
	}
	return out
}

var (
	closedOnce sync.Once
	closed     string
)

// closedPort is a loopback port nothing listens on: one the system gave a
// listener, closed at once.
func closedPort() string {
	closedOnce.Do(func() {
		closed = "1" // tcpmux: not served, should a port not be given
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return
		}
		_, closed, _ = net.SplitHostPort(l.Addr().String())
		l.Close()
	})
	return closed
}
