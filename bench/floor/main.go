// Command floor is the benchmark's baseline: the least a program can do to
// read the example API and print its records as Airbyte RECORD lines, with
// no manifest, no templates and no validation.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	base := flag.String("url", "", "example API URL")
	key := flag.String("api-key", "demo-key", "API key")
	pageSize := flag.Int("page-size", 1000, "records per page")
	flag.Parse()
	out := bufio.NewWriterSize(os.Stdout, 256<<10)
	defer out.Flush()
	client := &http.Client{}
	for offset := 0; ; {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/v1/users?limit=%d&offset=%d", *base, *pageSize, offset), nil)
		req.Header.Set("X-Api-Key", *key)
		resp, err := client.Do(req)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var page struct {
			Data []json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		now := strconv.FormatInt(time.Now().UnixMilli(), 10)
		for _, rec := range page.Data {
			out.WriteString(`{"type":"RECORD","record":{"stream":"users","data":`)
			out.Write(rec)
			out.WriteString(`,"emitted_at":` + now + "}}\n")
		}
		offset += len(page.Data)
		if len(page.Data) < *pageSize {
			return
		}
	}
}
