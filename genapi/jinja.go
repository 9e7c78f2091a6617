package genapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// Python is the interpreter that runs testdata/genapi.py: Debian's, which
// has python3-jinja2, python3-dateutil, python3-isodate and python3-tz.
const Python = "/usr/bin/python3"

// ErrNoJinja says that Python or its Jinja2 packages are missing.
var ErrNoJinja = errors.New("genapi needs " + Python + " with Jinja2 (Debian: python3-jinja2 python3-dateutil python3-isodate python3-tz)")

// CheckJinja tells whether the plan's templates can be rendered here.
func CheckJinja() error {
	if err := exec.Command(Python, "-c", "import jinja2, dateutil, isodate, pytz").Run(); err != nil {
		return ErrNoJinja
	}
	return nil
}

// jinjaBatch gathers what a plan asks of Jinja2, to ask it in one run.
type jinjaBatch struct {
	renders []renderItem
	cursors []cursorItem
}

type renderItem struct {
	Template   string         `json:"template"`
	Parameters map[string]any `json:"parameters"`
	done       func(*string)
}

type cursorItem struct {
	c    cursorCase
	done func(cursorResult)
}

// cursorCase is a CursorPagination strategy to search pages for (see
// testdata/genapi.py).
type cursorCase struct {
	CursorValue   string         `json:"cursor_value"`
	StopCondition string         `json:"stop_condition,omitempty"`
	Parameters    map[string]any `json:"parameters"`
	RecordsPath   []string       `json:"records_path"`
	Bodies        map[string]any `json:"bodies"` // record count -> a page holding that many
	ContinueCount int            `json:"continue_count"`
	LastCounts    []int          `json:"last_counts"`
	Pages         int            `json:"pages"`
	InjectPath    bool           `json:"inject_path"`
}

// cursorResult is what a page must hold to lead to the next one or stop.
type cursorResult struct {
	OK            bool   `json:"ok"`
	Why           string `json:"why"`
	ContinueCount int    `json:"continue_count"`
	Last          struct {
		Count      int         `json:"count"`
		Placements []placement `json:"placements"`
	} `json:"last"`
	Pages []struct {
		Placements []placement `json:"placements"`
		Token      string      `json:"token"`
	} `json:"pages"`
}

// placement is a value written into a page: chain[0] is response, headers
// or last_record, the rest keys (text) or list indexes (numbers).
type placement struct {
	Chain      []any `json:"chain"`
	ParentOnly bool  `json:"parent_only"`
	Value      any   `json:"value"`
}

func (j *jinjaBatch) render(template string, parameters map[string]any, done func(*string)) {
	j.renders = append(j.renders, renderItem{Template: template, Parameters: parameters, done: done})
}

func (j *jinjaBatch) cursor(c cursorCase, done func(cursorResult)) {
	j.cursors = append(j.cursors, cursorItem{c: c, done: done})
}

// run asks Jinja2 everything gathered and hands each answer over; what the
// answers ask in turn is asked in a next round.
func (j *jinjaBatch) run(config map[string]any, now time.Time) error {
	for len(j.renders) > 0 || len(j.cursors) > 0 {
		renders, cursors := j.renders, j.cursors
		j.renders, j.cursors = nil, nil
		if err := ask(config, now, renders, cursors); err != nil {
			return err
		}
	}
	return nil
}

func ask(config map[string]any, now time.Time, renders []renderItem, cursors []cursorItem) error {
	cases := make([]cursorCase, len(cursors))
	for i, c := range cursors {
		cases[i] = c.c
	}
	in, err := json.Marshal(map[string]any{"now": now.UTC().Format(time.RFC3339Nano), "config": config, "renders": renders, "cursors": cases})
	if err != nil {
		return err
	}
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command(Python, filepath.Join(filepath.Dir(file), "testdata", "genapi.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if _, statErr := os.Stat(Python); statErr != nil {
			return ErrNoJinja
		}
		return fmt.Errorf("genapi.py: %v: %s", err, stderr.String())
	}
	var res struct {
		Renders []*string      `json:"renders"`
		Cursors []cursorResult `json:"cursors"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return fmt.Errorf("genapi.py: %v", err)
	}
	if len(res.Renders) != len(renders) || len(res.Cursors) != len(cursors) {
		return fmt.Errorf("genapi.py answered %d renders and %d cursors for %d and %d", len(res.Renders), len(res.Cursors), len(renders), len(cursors))
	}
	for i, r := range renders {
		r.done(res.Renders[i])
	}
	for i, c := range cursors {
		c.done(res.Cursors[i])
	}
	return nil
}
