package protocol

// Levels of LOG messages.
const (
	LevelDebug = "DEBUG"
	LevelInfo  = "INFO"
	LevelWarn  = "WARN"
	LevelError = "ERROR"
)

// SetDebug makes Log print DEBUG messages; without it they are dropped, as
// the reference drops them without --debug.
func (w *Writer) SetDebug(on bool) {
	w.mu.Lock()
	w.debug = on
	w.mu.Unlock()
}

// Debugging tells whether DEBUG messages are printed, so that a caller can
// skip building them.
func (w *Writer) Debugging() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.debug
}

// Log prints a LOG message, masked like every LOG text.
func (w *Writer) Log(level, message string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if level == LevelDebug && !w.debug {
		return w.err
	}
	return w.writeLocked(&Message{Type: TypeLog, Log: &Log{Level: level, Message: message}})
}
