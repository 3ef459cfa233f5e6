package main

import (
	"context"
	"errors"
	"io"
)

// cmdSweep is not built yet; its issue replaces this file.
func cmdSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("sweep: not built yet")
}
