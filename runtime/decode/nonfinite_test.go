package decode

import "testing"

func TestNonFiniteToNull(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{`{"a":NaN,"b":[Infinity,-Infinity,-1.5],"c":"NaN \" Infinity"}`, `{"a":null,"b":[null,null,-1.5],"c":"NaN \" Infinity"}`, true},
		{`NaN`, `null`, true},
		{`{"a":1,"b":"-Infinity"}`, `{"a":1,"b":"-Infinity"}`, false},
		{`{"a":Nope}`, `{"a":Nope}`, false},
		{`{"a":"\\",NaN:1}`, `{"a":"\\",null:1}`, true}, // still not JSON: the caller's extraction fails again
	}
	for _, c := range cases {
		got, ok := NonFiniteToNull([]byte(c.in))
		if string(got) != c.want || ok != c.ok {
			t.Errorf("%s: got %s %v, want %s %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
