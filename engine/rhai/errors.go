package rhai

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a compile or run-time error with the script position it points at.
// Limit is set (to one of the Limit* names) when a sandbox limit stopped the
// script; Thrown holds the value of a `throw` that nothing caught.
type Error struct {
	Pos    Pos
	Msg    string
	Limit  string
	Thrown *Value
	// Trace lists the script function calls the error passed out of,
	// innermost first ("fn score called at line 12, column 9").
	Trace []string
}

func (e *Error) Error() string {
	msg := e.Msg
	if e.Pos.Line != 0 {
		msg = fmt.Sprintf("%s (%s)", e.Msg, e.Pos)
	}
	if len(e.Trace) > 0 {
		msg += " in " + strings.Join(e.Trace, ", in ")
	}
	return msg
}

// Names of the sandbox limits, as they appear in limit errors.
const (
	LimitOperations  = "max_operations"
	LimitCallDepth   = "max_call_depth"
	LimitStringLen   = "max_string_len"
	LimitArraySize   = "max_array_size"
	LimitMapSize     = "max_map_size"
	LimitExprDepth   = "max_expr_depth"
	LimitScriptBytes = "max_script_bytes"
)

// ErrLimit matches (with errors.Is) every error raised by a sandbox limit.
var ErrLimit = errors.New("rhai: sandbox limit reached")

// Is lets errors.Is(err, ErrLimit) find limit errors.
func (e *Error) Is(target error) bool { return target == ErrLimit && e.Limit != "" }

// LimitOf returns the name of the sandbox limit that stopped err, or "".
func LimitOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Limit
	}
	return ""
}

func errAt(p Pos, format string, args ...any) *Error {
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

func limitErr(p Pos, limit string, format string, args ...any) *Error {
	return &Error{Pos: p, Limit: limit, Msg: fmt.Sprintf(format, args...) + " (limit " + limit + ")"}
}
