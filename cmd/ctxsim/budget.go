package main

import (
	"context"
	"errors"
	"io"
)

// cmdBudget is not built yet; its issue replaces this file.
func cmdBudget(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("budget: not built yet")
}
