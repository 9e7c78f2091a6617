package interp

import (
	"regexp"
	"testing"
)

// mentionsStreamState finds what \bstream_state\b finds.
func TestMentionsStreamStateAsTheRegexpDid(t *testing.T) {
	re := regexp.MustCompile(`\bstream_state\b`)
	for _, src := range []string{"", "stream_state", "{{ stream_state.x }}", "{{ stream_state_x }}", "{{ xstream_state }}", "{{ x.stream_state }}",
		"{{ my_stream_state }} {{ stream_state }}", "stream_stat", "{{ stream_states }}", "{{ 'stream_state' }}", "é stream_state é", "1stream_state",
		"stream_state1", "stream_statestream_state", "stream_state-stream_state", "{{stream_state['a']}}"} {
		if got, want := mentionsStreamState(src), re.MatchString(src); got != want {
			t.Errorf("%q: %v, want %v", src, got, want)
		}
	}
}
