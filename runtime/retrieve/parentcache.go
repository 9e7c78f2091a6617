package retrieve

import (
	"os"
	"strconv"

	"github.com/airbyte-go/source-declarative/manifest"
	"github.com/airbyte-go/source-declarative/protocol"
	"github.com/airbyte-go/source-declarative/runtime/request"
)

// cacheMemory is how many bytes of answers a sync's response cache keeps in
// memory before it writes them to a temporary file; tests change it with
// SOURCE_DECLARATIVE_CACHE_MEMORY (bytes).
const (
	cacheMemory    = 64 << 20
	cacheMemoryEnv = "SOURCE_DECLARATIVE_CACHE_MEMORY"
)

// ParentCache is a sync's response cache, so that a parent stream is read
// once: the streams that are a parent of another stream (at any depth)
// keep their answers, as Airbyte turns use_cache on for them.
type ParentCache struct {
	cache   *request.Cache
	parents map[string]bool // the streams some stream reads as a parent
}

// StartCache makes the response cache of a sync of the streams.
func StartCache(streams []*manifest.Stream, log func(level, msg string)) *ParentCache {
	limit := int64(cacheMemory)
	if v := os.Getenv(cacheMemoryEnv); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			limit = n
		} else {
			log(protocol.LevelWarn, cacheMemoryEnv+": "+strconv.Quote(v)+" is not a number of bytes; the default is used")
		}
	}
	c := &ParentCache{cache: request.NewCache(limit, log), parents: map[string]bool{}}
	for _, st := range streams {
		addParents(st, c.parents)
	}
	return c
}

// Close drops the answers kept.
func (c *ParentCache) Close() {
	c.cache.Close()
}

// addParents adds the names of the stream's parent streams, and of theirs.
func addParents(st *manifest.Stream, names map[string]bool) {
	streams := []*manifest.Stream{st}
	if d := st.Delegation; d != nil {
		streams = []*manifest.Stream{d.FullRefresh, d.Incremental}
	}
	for _, s := range streams {
		if s == nil || s.Retriever == nil {
			continue
		}
		routers := []*manifest.PartitionRouter{s.Retriever.PartitionRouter}
		for len(routers) > 0 {
			pr := routers[len(routers)-1]
			routers = routers[:len(routers)-1]
			if pr == nil {
				continue
			}
			routers = append(routers, pr.Product...)
			if pr.Grouping != nil {
				routers = append(routers, pr.Grouping.Underlying)
			}
			if pr.Union != nil {
				routers = append(routers, pr.Union.Routers...)
			}
			if pr.Substream == nil {
				continue
			}
			for _, pc := range pr.Substream.Parents {
				if !names[pc.Stream.Name] {
					names[pc.Stream.Name] = true
					addParents(pc.Stream, names)
				}
			}
		}
	}
}

// Use is how a stream's page requests use the sync's cache (c nil: outside
// a sync): a
// requester with use_cache, and a parent stream's unless it says
// use_cache: false, share their answers at once (an answer being fetched
// is waited for, not asked again), as in Airbyte; a parent stream with
// use_cache: false takes only the answers of a read of it that went to its
// end (a stream read in full in this sync is not asked again; Airbyte asks
// again). Outside a sync, and for asynchronous jobs, nothing is cached.
func (c *ParentCache) Use(st *manifest.Stream) request.CacheUse {
	if c == nil || st.Retriever == nil || st.Retriever.Requester == nil || st.Retriever.Async != nil {
		return request.CacheUse{}
	}
	use := st.Retriever.Requester.UseCache
	if !c.parents[st.Name] && (use == nil || !*use) {
		return request.CacheUse{}
	}
	return request.CacheUse{Cache: c.cache, Read: &request.CacheRead{}, Shared: use == nil || *use}
}
