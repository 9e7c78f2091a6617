// Command api serves the example API (see package exampleapi).
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/airbyte-go/source-declarative/examples/exampleapi"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8765", "listen address")
	key := flag.String("api-key", "demo-key", "API key required in X-Api-Key (empty: none)")
	records := flag.Int("records", 25, "records per collection")
	size := flag.Int("record-size", 0, "approximate bytes per record")
	flag.Parse()
	log.Printf("example API on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, exampleapi.New(exampleapi.Options{APIKey: *key, Records: *records, RecordSize: *size})))
}
