// Command bare is the start-up yardstick of bench -mode startup: a Go binary
// that prints one line and exits, the least any Go command costs.
package main

import "fmt"

func main() {
	fmt.Println(`{"type":"LOG","log":{"level":"INFO","message":"bare"}}`)
}
