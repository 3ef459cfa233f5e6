package main

import (
	"context"
	"errors"
	"io"
)

// cmdModels is not built yet; its issue replaces this file.
func cmdModels(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("models: not built yet")
}
