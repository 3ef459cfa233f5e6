package main

import (
	"context"
	"errors"
	"io"
)

// cmdTrace is not built yet; its issue replaces this file.
func cmdTrace(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("trace: not built yet")
}
