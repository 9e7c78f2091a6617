package protocol

import (
	"encoding/json"
	"strings"

	"github.com/rs/zerolog"
)

// NewLogger returns a zerolog logger whose every line becomes a LOG message
// on w (masked like every LOG), never free text on stdout.
func NewLogger(w *Writer) zerolog.Logger {
	return zerolog.New(logSink{w}).Level(zerolog.DebugLevel)
}

type logSink struct{ w *Writer }

var levels = map[string]string{"trace": "TRACE", "debug": "DEBUG", "info": "INFO", "warn": "WARN", "error": "ERROR", "fatal": "FATAL", "panic": "FATAL"}

func (s logSink) Write(p []byte) (int, error) {
	var entry map[string]any
	if err := json.Unmarshal(p, &entry); err != nil {
		return len(p), s.w.Log("INFO", strings.TrimSpace(string(p)))
	}
	level := levels[asString(entry[zerolog.LevelFieldName])]
	if level == "" {
		level = "INFO"
	}
	msg := asString(entry[zerolog.MessageFieldName])
	delete(entry, zerolog.LevelFieldName)
	delete(entry, zerolog.MessageFieldName)
	if len(entry) > 0 {
		extra, _ := json.Marshal(entry)
		msg += " " + string(extra)
	}
	return len(p), s.w.Log(level, msg)
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}
