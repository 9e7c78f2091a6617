package transform

import "testing"

var benchRecord = []byte(`{"created_at":"2024-01-01T00:01:00Z","email":"user1@example.com","id":1,"name":"user-1","padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`)

// BenchmarkAddRemove measures one record through AddFields (a constant
// and a template over the record) and RemoveFields: decode, change, encode.
func BenchmarkAddRemove(b *testing.B) {
	add, _ := New(addFieldsT("", field("source", "example", ""), field("user_key", "{{ record['id'] }}-{{ record['name'] }}", "")))
	remove, _ := New(removeFieldsT("", "email"))
	v := vars()
	var buf []byte
	b.SetBytes(int64(len(benchRecord)))
	for i := 0; i < b.N; i++ {
		rec, _ := Decode(benchRecord)
		add.Apply(rec, v)
		remove.Apply(rec, v)
		buf = AppendJSON(buf[:0], rec)
	}
}

// BenchmarkDecodeEncode is the floor of any transformation.
func BenchmarkDecodeEncode(b *testing.B) {
	var buf []byte
	b.SetBytes(int64(len(benchRecord)))
	for i := 0; i < b.N; i++ {
		rec, _ := Decode(benchRecord)
		buf = AppendJSON(buf[:0], rec)
	}
}

// BenchmarkEvalOnly is the template of BenchmarkAddRemove alone.
func BenchmarkEvalOnly(b *testing.B) {
	t := tpl("{{ record['id'] }}-{{ record['name'] }}")
	v := vars()
	v["record"] = map[string]any{"id": int64(1), "name": "user-1"}
	for i := 0; i < b.N; i++ {
		t.Eval(v)
	}
}
