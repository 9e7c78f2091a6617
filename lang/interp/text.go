package interp

import (
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/airbyte-go/source-declarative/lang/datetime"
)

// textWriter writes values as Python's str() and repr() write them, up to
// a limit: once past it, it writes nothing more and only counts, so that
// the text of a list holding a long string a thousand times (small in
// memory) costs the limit, not a gigabyte, and its length says it is too
// long. Without a builder it only counts. An integer too long for Python
// to write (unless exact), or a container nested too deeply, is an error;
// a dict holding itself is written {...}, as Python writes it.
type textWriter struct {
	b     *strings.Builder // nil: count only
	n     int              // bytes of the whole text, as far as counted
	limit int
	// exact writes every integer, past Python's limit too: for the text of
	// a value outside templates (String, Repr), which hides nothing.
	exact bool
	err   error
	open  []uintptr // the dicts being written, innermost last
}

// over tells that nothing more needs writing: the text is past the limit,
// or cannot be written.
func (w *textWriter) over() bool { return w.n > w.limit || w.err != nil }

func (w *textWriter) write(s string) {
	if w.b != nil && w.n <= w.limit {
		w.b.WriteString(s)
	}
	w.n += len(s)
}

// str writes v as str() does.
func (w *textWriter) str(v any) {
	if x, ok := v.(*big.Int); ok {
		w.bigInt(x)
		return
	}
	if text, ok := scalarText(v); ok {
		w.write(text)
		return
	}
	w.repr(canon(v))
}

// scalarText is str() of a value that holds no other (not a container),
// written at once; ok is false for any other, and for an integer beyond 64
// bits (see textWriter.bigInt).
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case nil:
		return "None", true
	case bool:
		if x {
			return "True", true
		}
		return "False", true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return FormatFloat(x), true
	case *undefined:
		return "", true
	case time.Time:
		return datetime.PythonString(x), true
	case date:
		return x.t.Format("2006-01-02"), true
	case time.Duration:
		return datetime.PythonDuration(x), true
	case monthDuration:
		return monthDurationString(x.d), true
	}
	return "", false
}

// bigInt writes an integer beyond 64 bits, or fails past Python's limit on
// writing one.
func (w *textWriter) bigInt(n *big.Int) {
	if n.BitLen() > maxIntBits && !w.exact {
		w.err = valueErr("Exceeds the limit (%d digits) for integer string conversion", maxIntDigits)
		return
	}
	w.write(n.String())
}

// repr writes v as repr() does.
func (w *textWriter) repr(v any) {
	if w.over() {
		return
	}
	if len(w.open) > 4*maxNesting {
		w.err = valueErr("maximum recursion depth exceeded while getting the repr of an object")
		return
	}
	switch x := canon(v).(type) {
	case string:
		w.write(quotePy(x))
	case []any:
		w.write("[")
		w.items(x)
		w.write("]")
	case tuple:
		w.write("(")
		w.items(x)
		if len(x) == 1 {
			w.write(",")
		}
		w.write(")")
	case map[string]any:
		if w.enter(x) {
			return
		}
		w.write("{")
		for i, k := range SortedKeys(x) {
			if w.over() {
				break
			}
			if i > 0 {
				w.write(", ")
			}
			w.write(quotePy(k))
			w.write(": ")
			w.repr(x[k])
		}
		w.write("}")
		w.leave()
	case pyBytes:
		w.write(bytesRepr(x))
	case *pyDict:
		if w.enter(x) {
			return
		}
		w.write("{")
		for i, k := range x.keys {
			if w.over() {
				break
			}
			if i > 0 {
				w.write(", ")
			}
			w.repr(k)
			w.write(": ")
			w.repr(x.vals[i])
		}
		w.write("}")
		w.leave()
	case *view:
		w.write("dict_" + x.kind + "([")
		w.items(x.items)
		w.write("])")
	case time.Time:
		w.write(fmtDatetimeRepr(x))
	case date:
		w.write("datetime.date(" + strconv.Itoa(x.t.Year()) + ", " + strconv.Itoa(int(x.t.Month())) + ", " + strconv.Itoa(x.t.Day()) + ")")
	case time.Duration:
		w.write(timedeltaRepr(x))
	case *undefined:
		w.write("Undefined")
	case *namespace:
		w.write("<Namespace ")
		w.repr(x.attrs)
		w.write(">")
	case *templateRef:
		w.write("<TemplateReference None>")
	case *callable:
		w.write("<built-in function " + x.name + ">")
	case *boundMethod:
		w.write("<built-in method " + x.name + ">")
	default:
		w.str(x)
	}
}

func (w *textWriter) items(items []any) {
	for i, e := range items {
		if w.over() {
			return
		}
		if i > 0 {
			w.write(", ")
		}
		w.repr(e)
	}
}

// enter notes a dict being written; true when it is already being written
// (it holds itself), which is then written {...}.
func (w *textWriter) enter(dict any) bool {
	p := reflect.ValueOf(dict).Pointer()
	for _, o := range w.open {
		if o == p {
			w.write("{...}")
			return true
		}
	}
	w.open = append(w.open, p)
	return false
}

func (w *textWriter) leave() { w.open = w.open[:len(w.open)-1] }

// boundedText is v's text as a template writes it (asString: as String
// writes it, None empty and booleans true/false; else as str()), or an
// error when it is longer than MaxOutput or cannot be written.
func boundedText(v any, asString bool) (string, error) {
	if asString {
		switch v.(type) {
		case nil, bool:
			return String(v), nil
		}
	}
	if text, ok := scalarText(v); ok {
		return text, checkLen(len(text))
	}
	var b strings.Builder
	w := &textWriter{b: &b, limit: MaxOutput}
	w.str(v)
	if w.err != nil {
		return "", w.err
	}
	return b.String(), checkLen(w.n)
}

// pyText is str() of v, or an error when it is longer than MaxOutput or
// cannot be written: for a filter whose result would not show a text cut
// (a hash of it, its words counted).
func pyText(v any) (string, error) { return boundedText(v, false) }

// checkText refuses a value whose text would be longer than MaxOutput or
// cannot be written, without writing it: a whole-expression template's
// value is turned into text by whoever takes it.
func checkText(v any) error {
	switch v.(type) {
	case nil, bool, int64, float64, string:
		return nil
	}
	w := &textWriter{limit: MaxOutput}
	w.str(v)
	if w.err != nil {
		return w.err
	}
	return checkLen(w.n)
}
