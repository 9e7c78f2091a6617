package interp

// The syntax tree of a template. Expressions evaluate to a value; statements
// write to the output.

type expr interface {
	eval(s *state) (any, error)
}

type stmt interface {
	exec(s *state) error
}

type (
	constExpr struct{ v any }
	nameExpr  struct{ name string }
	attrExpr  struct {
		x    expr
		name string
	}
	itemExpr struct {
		x   expr
		key expr
	}
	sliceExpr struct {
		x               expr
		lo, hi, stepExp expr // nil when absent
	}
	callExpr struct {
		fn   expr
		args callArgs
	}
	filterExpr struct {
		x    expr
		name string
		args callArgs
		f    filterFunc
	}
	testExpr struct {
		x    expr
		name string
		args callArgs
		t    testFunc
	}
	unaryExpr struct {
		op string // "-", "+", "not"
		x  expr
	}
	binaryExpr struct {
		op   string // + - * / // % **
		l, r expr
	}
	concatExpr  struct{ parts []expr }
	andExpr     struct{ l, r expr }
	orExpr      struct{ l, r expr }
	compareExpr struct {
		first expr
		ops   []cmpOp
	}
	condExpr struct {
		test, then, other expr // other may be nil: undefined when the test fails
	}
	listExpr  struct{ items []expr }
	tupleExpr struct{ items []expr }
	dictExpr  struct{ keys, vals []expr }
)

type cmpOp struct {
	op string // eq ne lt lteq gt gteq in notin
	x  expr
}

type callArgs struct {
	pos       []expr
	names     []string
	kw        []expr
	star      expr // *args
	starStar  expr // **kwargs
	hasKwargs bool
}

// Statements.
type (
	dataStmt   struct{ text string }
	outputStmt struct{ x expr }
	ifStmt     struct {
		tests  []expr
		bodies [][]stmt
		els    []stmt
	}
	forStmt struct {
		target target
		iter   expr
		filter expr
		body   []stmt
		els    []stmt
	}
	setStmt struct {
		target target
		value  expr
	}
	setBlockStmt struct {
		name  string
		body  []stmt
		chain expr // filters applied to the block's text, or nil
	}
	withStmt struct {
		names []string
		vals  []expr
		body  []stmt
	}
	filterStmt struct {
		chain expr // filters whose innermost input is the block's text
		body  []stmt
	}
	// blockText is the text of the enclosing {% filter %} or {% set %} block.
	blockText struct{}
	// macroStmt defines a macro: a callable that renders its body.
	macroStmt struct {
		name                    string
		params                  []string
		defaults                []expr // one per param, nil when it has none
		body                    []stmt
		varargs, kwargs, caller bool // the body reads varargs, kwargs or caller
	}
	// callBlockStmt calls a macro with caller, a macro of the block's body.
	callBlockStmt struct {
		call   *callExpr
		caller *macroStmt
	}
)

// target is what {% for %} and {% set %} assign to: a name, a tuple of
// names, or a namespace attribute.
type target struct {
	names []string // one name, or several to unpack
	tuple bool
	attr  string // set ns.attr = ...
}
