package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// Each case is what Airbyte's server (FastAPI 0.115, Python 3.13's json)
// answered for the body, read off it by hand.
func TestPythonJSONErrors(t *testing.T) {
	for _, c := range []struct {
		body string
		pos  int
		msg  string
	}{
		{`not json`, 0, "Expecting value"},
		{`   `, 3, "Expecting value"},
		{`{`, 1, "Expecting property name enclosed in double quotes"},
		{`{"a":1,}`, 6, "Illegal trailing comma before end of object"},
		{`[1,]`, 2, "Illegal trailing comma before end of array"},
		{`{"a" 1}`, 5, "Expecting ':' delimiter"},
		{`{"a":1 "b"}`, 7, "Expecting ',' delimiter"},
		{`{"aé":"\x"}`, 7, "Invalid \\escape"}, // a position in characters, not bytes
		{`{"a":"abc`, 5, "Unterminated string starting at"},
		{`{"a":1} x`, 8, "Extra data"},
		{`{"a":"\u12"}`, 7, "Invalid \\uXXXX escape"},
		{"{\"a\":\"x\x01\"}", 7, "Invalid control character at"},
		{`{"manifest":{},"config":{},"stream_limit":tru}`, 42, "Expecting value"},
		{`{"a":NaN}`, 5, "Expecting value"}, // Python reads NaN; JSON has none
		{`[01]`, 2, "Expecting ',' delimiter"},
		{`[1.]`, 2, "Expecting ',' delimiter"},
		{`"\u00e9\n"`, -1, ""},
		{`{"a":[1,2.5e-3,{"b":null}],"c":true,"d":false}`, -1, ""},
	} {
		got := pythonJSONError([]byte(c.body))
		switch {
		case c.pos < 0 && got != nil:
			t.Errorf("%s: %+v, want valid", c.body, *got)
		case c.pos >= 0 && (got == nil || got.pos != c.pos || got.msg != c.msg):
			t.Errorf("%s: %+v, want %d %q", c.body, got, c.pos, c.msg)
		}
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if got := pythonJSONError([]byte(deep)); got == nil || got.msg != tooDeep {
		t.Errorf("%d nested lists: %+v, want %q", maxDepth+1, got, tooDeep)
	}
}

// Each case is what Airbyte's server answered for stream_limit (1..100) set
// to the value.
func TestIntegerFieldsAsPydantic(t *testing.T) {
	f := field{name: "stream_limit", kind: integer, min: 1, max: 100}
	for _, c := range []struct {
		value string // JSON
		want  string // the value, or the error as JSON
	}{
		{`3`, `3`},
		{`3.0`, `3`},
		{`1E2`, `100`},
		{`true`, `1`},
		{`"3.0"`, `3`},
		{`"3.00"`, `3`},
		{`" +3 "`, `3`},
		{`"\t4\n"`, `4`},
		{`"\u00a04"`, `4`},
		{`"1_0"`, `10`},
		{`"1_0.0"`, `10`},
		{`"00_1"`, `1`},
		{`"0003"`, `3`},
		{`0`, `{"type":"greater_than_equal","loc":["body","stream_limit"],"msg":"Input should be greater than or equal to 1","input":0,"ctx":{"ge":1}}`},
		{`false`, `{"type":"greater_than_equal","loc":["body","stream_limit"],"msg":"Input should be greater than or equal to 1","input":false,"ctx":{"ge":1}}`},
		{`"-0"`, `{"type":"greater_than_equal","loc":["body","stream_limit"],"msg":"Input should be greater than or equal to 1","input":"-0","ctx":{"ge":1}}`},
		{`-1.0`, `{"type":"greater_than_equal","loc":["body","stream_limit"],"msg":"Input should be greater than or equal to 1","input":-1.0,"ctx":{"ge":1}}`},
		{`101`, `{"type":"less_than_equal","loc":["body","stream_limit"],"msg":"Input should be less than or equal to 100","input":101,"ctx":{"le":100}}`},
		{`1e3`, `{"type":"less_than_equal","loc":["body","stream_limit"],"msg":"Input should be less than or equal to 100","input":1000.0,"ctx":{"le":100}}`},
		{`99999999999999999999`, `{"type":"less_than_equal","loc":["body","stream_limit"],"msg":"Input should be less than or equal to 100","input":99999999999999999999,"ctx":{"le":100}}`},
		{`"99999999999999999999999"`, `{"type":"less_than_equal","loc":["body","stream_limit"],"msg":"Input should be less than or equal to 100","input":"99999999999999999999999","ctx":{"le":100}}`},
		{`"1_000"`, `{"type":"less_than_equal","loc":["body","stream_limit"],"msg":"Input should be less than or equal to 100","input":"1_000","ctx":{"le":100}}`},
		{`1.5`, `{"type":"int_from_float","loc":["body","stream_limit"],"msg":"Input should be a valid integer, got a number with a fractional part","input":1.5}`},
		{`"3.5"`, `{"type":"int_parsing","loc":["body","stream_limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"3.5"}`},
		{`"3."`, `{"type":"int_parsing","loc":["body","stream_limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"3."}`},
		{`"3.0_0"`, `{"type":"int_parsing","loc":["body","stream_limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"3.0_0"}`},
		{`"1__0"`, `{"type":"int_parsing","loc":["body","stream_limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"1__0"}`},
		{`"_1"`, `{"type":"int_parsing","loc":["body","stream_limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"_1"}`},
		{`"+-1"`, `{"type":"int_parsing","loc":["body","stream_limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"+-1"}`},
		{`"1e2"`, `{"type":"int_parsing","loc":["body","stream_limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"1e2"}`},
		{`"٣"`, `{"type":"int_parsing","loc":["body","stream_limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"٣"}`},
		{`""`, `{"type":"int_parsing","loc":["body","stream_limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":""}`},
		{`null`, `{"type":"int_type","loc":["body","stream_limit"],"msg":"Input should be a valid integer","input":null}`},
		{`[]`, `{"type":"int_type","loc":["body","stream_limit"],"msg":"Input should be a valid integer","input":[]}`},
		{`{}`, `{"type":"int_type","loc":["body","stream_limit"],"msg":"Input should be a valid integer","input":{}}`},
		{`1.5e400`, `{"type":"finite_number","loc":["body","stream_limit"],"msg":"Input should be a finite number","input":1.5e400}`},
	} {
		d := json.NewDecoder(strings.NewReader(c.value))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		got, errs := f.validate(v, []any{"body", "stream_limit"})
		text := string(marshal(got))
		if len(errs) > 0 {
			text = string(marshal(errs[0]))
		}
		if text != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.value, text, c.want)
		}
	}
}

func TestFloatRepr(t *testing.T) {
	for in, want := range map[float64]string{1000: "1000.0", 1e16: "1e+16", 1.5e-7: "1.5e-07", 0.0001: "0.0001", -1: "-1.0",
		1.5: "1.5", 123456789012345.6: "123456789012345.6", 1e100: "1e+100", 0.1: "0.1", 2.5e-5: "2.5e-05"} {
		if got := floatRepr(in); got != want {
			t.Errorf("%v: %s, want %s", in, got, want)
		}
	}
}

// The checksums are hashlib.md5(code.encode()).hexdigest(), as Airbyte's
// server computes them (values from Python).
func TestInjectComponents(t *testing.T) {
	for code, sum := range map[string]string{"x = 1\n": "3253b41059cac6e987c5a5e9233ea5d0", "class A: pass  # é\n": "4ce755e001023b88c203956928eb4545"} {
		config := map[string]any{"api_key": "k"}
		injectComponents(config, code)
		want := `{"__injected_components_py":` + string(marshal(code)) + `,"__injected_components_py_checksums":{"md5":"` + sum + `"},"api_key":"k"}`
		if got := string(marshal(config)); got != want {
			t.Errorf("got %s\nwant %s", got, want)
		}
	}
}
