// Command barehttp is the start-up floor of a connector in bench -mode
// startup: a Go binary that links net/http and crypto/tls, as any connector
// must, and prints one line; given a URL, it first GETs it (with the example
// API's key) and prints the body's length, the least a check can do.
package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
)

var _ = tls.Client

func main() {
	if len(os.Args) < 2 {
		fmt.Println(`{"type":"LOG","log":{"level":"INFO","message":"bare"}}`)
		return
	}
	req, err := http.NewRequest(http.MethodGet, os.Args[1], nil)
	if err != nil {
		panic(err)
	}
	req.Header.Set("X-Api-Key", "demo-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		panic(fmt.Sprint(resp.Status, err))
	}
	fmt.Println(len(b))
}
