package main

import (
	"context"
	"errors"
	"io"
)

// cmdFidelity is not built yet; its issue replaces this file.
func cmdFidelity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("fidelity: not built yet")
}
