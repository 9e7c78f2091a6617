package differential

import (
	"testing"
	"time"

	"github.com/airbyte-go/source-declarative/genapi"
	"github.com/airbyte-go/source-declarative/manifest"
)

// A stream read the same way as a parent stream (captain-data's jobs and
// successful_jobs, the parent of job_results) has its requests filed under
// the first's name by the API; fewer of them is the parent's deliberate
// read-once, not a difference.
func TestTwinOfAParentCountsAsAParent(t *testing.T) {
	text := `
version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [workflows]}
definitions:
  requester: &requester {type: HttpRequester, url_base: "https://api.example.com/v3/", http_method: GET}
  selector: &selector {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
  workflows: &workflows
    type: DeclarativeStream
    name: workflows
    retriever: {type: SimpleRetriever, requester: {<<: *requester, path: /workflows}, record_selector: *selector}
  byWorkflow: &byWorkflow
    type: SubstreamPartitionRouter
    parent_stream_configs: [{type: ParentStreamConfig, parent_key: uid, partition_field: parent_id, stream: *workflows}]
  jobsRetriever: &jobsRetriever
    type: SimpleRetriever
    requester: {<<: *requester, path: "/workflows/{{ stream_partition.parent_id }}/jobs"}
    record_selector: *selector
    partition_router: *byWorkflow
  successful: &successful {type: DeclarativeStream, name: successful_jobs, retriever: *jobsRetriever}
streams:
  - *workflows
  - {type: DeclarativeStream, name: jobs, retriever: *jobsRetriever}
  - *successful
  - type: DeclarativeStream
    name: job_results
    retriever:
      type: SimpleRetriever
      requester: {<<: *requester, path: "/jobs/{{ stream_partition.parent_id }}/results"}
      record_selector: *selector
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs: [{type: ParentStreamConfig, parent_key: uid, partition_field: parent_id, stream: *successful}]
`
	raw, err := manifest.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := manifest.ResolveOnly(manifest.DeepCopy(raw).(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := genapi.NewPlan(resolved, map[string]any{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m := &run{raw: raw, plan: plan}
	for stream, want := range map[string]bool{"workflows": true, "jobs": true, "successful_jobs": true, "job_results": false} {
		if got := m.isParent(stream); got != want {
			t.Errorf("isParent(%q) = %v, want %v (twins %v)", stream, got, want, plan.Twins(stream))
		}
	}
}
