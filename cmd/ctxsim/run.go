package main

import (
	"context"
	"errors"
	"io"
)

// cmdRun is not built yet; its issue replaces this file.
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("run: not built yet")
}
