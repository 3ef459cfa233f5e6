package main

import (
	"context"
	"errors"
	"io"
)

// cmdValidate is not built yet; its issue replaces this file.
func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("validate: not built yet")
}
