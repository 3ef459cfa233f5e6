package main

import (
	"context"
	"errors"
	"io"
)

// cmdInspect is not built yet; its issue replaces this file.
func cmdInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("inspect: not built yet")
}
