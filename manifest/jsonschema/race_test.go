//go:build race

package jsonschema

// The race detector makes sync.Pool drop what it holds, so regexp matching
// allocates: allocation counts mean nothing under it.
func init() { raceEnabled = true }
